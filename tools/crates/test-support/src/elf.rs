//! Host ELF files: compiled by gcc (or the build root's clang for
//! aarch64), or laid out byte by byte when a test needs a shape or a size
//! no compiler makes quickly.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{llvm, run};

/// The CPU a host ELF file is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpu {
    X86_64,
    Aarch64,
}

/// `dir/name`: a shared object gcc builds from the C source `src` with
/// the C library and `args` (search paths, libraries; run in `dir`).
pub fn gcc_so(dir: &Path, name: &str, src: &str, args: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(&c)
        .args(args));
    std::fs::remove_file(c).unwrap();
    out
}

/// `dir/name`: [`gcc_so`] with the search path `runpath` (DT_RUNPATH) and
/// `extra` arguments; returns its bytes.
pub fn runpath_so(dir: &Path, name: &str, src: &str, runpath: &str, extra: &[&str]) -> Vec<u8> {
    let runpath = format!("-Wl,-rpath,{runpath}");
    let mut args = vec!["-Wl,--enable-new-dtags", runpath.as_str()];
    args.extend(extra);
    std::fs::read(gcc_so(dir, name, src, &args)).unwrap()
}

/// A RUNPATH as a Bazel build leaves it: runfiles and `_solib` entries,
/// the ROCm SDK's site-packages and install paths, a missing directory and
/// a duplicate. What a repair keeps of it: [`CLEAN_RUNPATH`].
pub const DIRTY_RUNPATH: &str = "$ORIGIN:$ORIGIN/_ext.so.runfiles/__main__/_solib_k8/_U_S_Srocm:\
/usr/local/lib/python3.12/dist-packages/_rocm_sdk_core/lib:$ORIGIN/../_rocm_sdk_core/lib:\
$ORIGIN/../../_rocm_sdk_core/lib:/opt/rocm-7.2.0/lib:/opt/rocm/lib:$ORIGIN/missing:$ORIGIN";

/// [`DIRTY_RUNPATH`] repaired.
pub const CLEAN_RUNPATH: &str = "$ORIGIN:$ORIGIN/../_rocm_sdk_core/lib:/opt/rocm/lib";

/// `dir/demo-1.0-py3-none-any.whl`: a pure-tagged, purelib wheel
/// ([`crate::crafted_wheel`]) with `demo/_ext.so` built from `src` and
/// `extra` with the search path [`DIRTY_RUNPATH`]; returns the `.so`.
pub fn dirty_wheel(dir: &Path, src: &str, extra: &[&str]) -> Vec<u8> {
    let ext = runpath_so(dir, "_ext.so", src, DIRTY_RUNPATH, extra);
    crate::crafted_wheel(
        &dir.join("demo-1.0-py3-none-any.whl"),
        "demo",
        "1.0",
        &[("demo/__init__.py", &b""[..]), ("demo/_ext.so", &ext)],
        &[],
    );
    ext
}

/// C source of a function a test can call, `answer()` returning 42.
pub const ANSWER_C: &str = "int answer(void) { return 42; }\n";

/// A small x86-64 shared library ([`ANSWER_C`]), compiled with gcc into
/// `dir`.
pub fn host_so(dir: &Path, name: &str) -> PathBuf {
    gcc_so(dir, name, ANSWER_C, &[])
}

/// Compile C source into a shared object with gcc. `-nostdlib` keeps the
/// host's glibc out of the result, so its version requirements are exactly
/// the ones the test creates.
pub fn build_so(dir: &Path, out: &str, src: &str, extra: &[&str]) -> PathBuf {
    build_so_for(Cpu::X86_64, dir, out, src, extra)
}

/// [`build_so`] for the CPU `cpu`.
pub fn build_so_for(cpu: Cpu, dir: &Path, out: &str, src: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["-shared", "-fPIC"];
    args.extend(extra);
    build_elf(cpu, dir, out, src, &args)
}

/// Compile and link C source for `cpu` without the host's C library
/// (`-nostdlib`), with `args` (`-shared`, `-pie`, libraries, ...): gcc for
/// x86_64, the build root's own CPU; clang and lld for aarch64, for which
/// the build root has no gcc.
pub fn build_elf(cpu: Cpu, dir: &Path, out: &str, src: &str, args: &[&str]) -> PathBuf {
    let c = dir.join(format!("{out}.c"));
    std::fs::write(&c, src).unwrap();
    let o = dir.join(out);
    let mut cmd = match cpu {
        Cpu::X86_64 => Command::new("gcc"),
        Cpu::Aarch64 => {
            let mut c = Command::new(llvm("clang"));
            c.args(["--target=aarch64-linux-gnu", "-fuse-ld=lld"]);
            c
        }
    };
    // Libraries after the source, so that they resolve its symbols.
    run(cmd.arg("-nostdlib").arg("-o").arg(&o).arg(&c).args(args));
    o
}

/// A stub library with the given soname; `version_script` (if any) defines
/// its symbol versions.
pub fn stub_lib(dir: &Path, soname: &str, src: &str, version_script: Option<&str>) -> PathBuf {
    stub_lib_for(Cpu::X86_64, dir, soname, src, version_script)
}

/// [`stub_lib`] for the CPU `cpu`.
pub fn stub_lib_for(
    cpu: Cpu,
    dir: &Path,
    soname: &str,
    src: &str,
    version_script: Option<&str>,
) -> PathBuf {
    let mut args = vec![format!("-Wl,-soname,{soname}")];
    if let Some(script) = version_script {
        let v = dir.join(format!("{soname}.map"));
        std::fs::write(&v, script).unwrap();
        args.push(format!("-Wl,--version-script={}", v.display()));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    build_so_for(cpu, dir, soname, src, &refs)
}

/// A glibc stand-in for `cpu`: `old_fn` at GLIBC_2.17, `new_fn` first at
/// GLIBC_2.28.
pub fn glibc_stub(cpu: Cpu, dir: &Path) -> PathBuf {
    stub_lib_for(
        cpu,
        dir,
        "libc.so.6",
        "int old_fn(void){return 1;}\nint new_fn(void){return 2;}\n",
        Some("GLIBC_2.17 { global: old_fn; local: *; };\nGLIBC_2.28 { global: new_fn; } GLIBC_2.17;\n"),
    )
}

/// Little-endian stores into a buffer being laid out.
fn p16(v: &mut [u8], o: usize, x: u16) {
    v[o..o + 2].copy_from_slice(&x.to_le_bytes());
}
fn p32(v: &mut [u8], o: usize, x: u32) {
    v[o..o + 4].copy_from_slice(&x.to_le_bytes());
}
fn p64(v: &mut [u8], o: usize, x: u64) {
    v[o..o + 8].copy_from_slice(&x.to_le_bytes());
}

/// Moves the file bytes of the ELF64 file `elf`'s first `PT_LOAD` one past
/// the end of the file (its `p_offset`), as a hostile file may claim.
pub fn first_load_past_the_end(elf: &mut [u8]) {
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let ph = (0..u16_at(0x38))
        .map(|i| phoff + i * u16_at(0x36))
        .find(|&ph| u32::from_le_bytes(elf[ph..ph + 4].try_into().unwrap()) == 1)
        .expect("no PT_LOAD");
    let end = elf.len() as u64 + 1;
    p64(elf, ph + 8, end);
}

/// What [`synthetic_so`] puts in a shared object.
pub struct SoShape<'a> {
    pub soname: &'a str,
    /// Bytes of `.dynstr` (symbol-like names after the needed ones).
    pub dynstr: usize,
    /// Where `.hip_fatbin` starts and its size (the caller fills it).
    pub fatbin: Option<(u64, u64)>,
    /// Total file size; zeros fill what the parts do not.
    pub size: usize,
}

/// An x86-64 shared object as linkers lay one out: headers, `.dynsym`,
/// `.dynstr` and `.dynamic` at the start of one `PT_LOAD` that covers the
/// file, `.hip_fatbin` where asked, `.shstrtab` and the section headers at
/// the end. `DT_NEEDED` libc.so.6, `DT_SONAME`, `DT_RUNPATH` `$ORIGIN`.
pub fn synthetic_so(s: &SoShape) -> Vec<u8> {
    let mut f = vec![0u8; s.size];
    let mut dynstr = b"\0libc.so.6\0$ORIGIN\0".to_vec();
    let soname_at = dynstr.len() as u64;
    dynstr.extend_from_slice(s.soname.as_bytes());
    dynstr.push(0);
    let mut k = 0;
    while dynstr.len() < s.dynstr {
        dynstr.extend_from_slice(format!("_ZN4demo6kernel{k:08}Ev\0").as_bytes());
        k += 1;
    }
    let (dynsym, nsyms) = (176usize, 4usize);
    let dynstr_off = dynsym + 24 * nsyms;
    let dynamic = (dynstr_off + dynstr.len() + 7) & !7;
    let tags: [(u64, u64); 8] = [
        (1, 1), // DT_NEEDED libc.so.6
        (14, soname_at),
        (29, 11), // DT_RUNPATH $ORIGIN
        (5, dynstr_off as u64),
        (10, dynstr.len() as u64),
        (6, dynsym as u64),
        (11, 24),
        (0, 0),
    ];
    f[dynstr_off..dynstr_off + dynstr.len()].copy_from_slice(&dynstr);
    for (i, (t, v)) in tags.iter().enumerate() {
        p64(&mut f, dynamic + 16 * i, *t);
        p64(&mut f, dynamic + 16 * i + 8, *v);
    }
    let names = b"\0.dynsym\0.dynstr\0.dynamic\0.hip_fatbin\0.shstrtab\0";
    let nsec = 6;
    let shoff = (s.size - 64 * nsec) & !7;
    let shstrtab = shoff - names.len();
    f[shstrtab..shstrtab + names.len()].copy_from_slice(names);
    // (name, type, flags, offset, size, link, entsize)
    let mut secs = [
        (1, 11, 2, dynsym, 24 * nsyms, 2, 24),
        (9, 3, 2, dynstr_off, dynstr.len(), 0, 0),
        (17, 6, 3, dynamic, 16 * tags.len(), 2, 16),
        (26, 1, 2, 0, 0, 0, 0),
        (38, 3, 0, shstrtab, names.len(), 0, 0),
    ];
    if let Some((at, len)) = s.fatbin {
        secs[3] = (26, 1, 2, at as usize, len as usize, 0, 0);
    }
    for (i, &(name, ty, flags, off, size, link, entsize)) in secs.iter().enumerate() {
        let o = shoff + 64 * (i + 1);
        p32(&mut f, o, name);
        p32(&mut f, o + 4, ty);
        p64(&mut f, o + 8, flags);
        p64(&mut f, o + 16, off as u64);
        p64(&mut f, o + 24, off as u64);
        p64(&mut f, o + 32, size as u64);
        p32(&mut f, o + 40, link);
        p32(&mut f, o + 44, u32::from(ty == 11));
        p64(&mut f, o + 48, 8);
        p64(&mut f, o + 56, entsize);
    }
    elf_headers(&mut f, shoff, nsec as u16, (dynamic, 16 * tags.len()));
    f
}

/// The ELF header of [`synthetic_so`] and its program headers: `PT_LOAD`
/// over the whole file and `PT_DYNAMIC` at `dynamic` (offset, size).
fn elf_headers(f: &mut [u8], shoff: usize, nsec: u16, dynamic: (usize, usize)) {
    let size = f.len();
    f[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    p16(f, 16, 3); // ET_DYN
    p16(f, 18, 62); // EM_X86_64
    p32(f, 20, 1);
    p64(f, 32, 64); // e_phoff
    p64(f, 40, shoff as u64);
    for (o, v) in [(52, 64), (54, 56), (56, 2), (58, 64), (60, nsec), (62, 5)] {
        p16(f, o, v);
    }
    // PT_LOAD over the file, PT_DYNAMIC.
    for (o, ty, flags, off, size) in [(64, 1u32, 5u32, 0, size), (120, 2, 6, dynamic.0, dynamic.1)]
    {
        p32(f, o, ty);
        p32(f, o + 4, flags);
        for k in [8, 16, 24] {
            p64(f, o + k, off as u64);
        }
        p64(f, o + 32, size as u64);
        p64(f, o + 40, size as u64);
        p64(f, o + 48, 0x1000);
    }
}

/// Copies the file at `src` to the start of `dst`, skipping runs of zeros:
/// `dst` is a fresh zeroed buffer whose untouched pages are not resident,
/// so this process's peak stays small (it counts in the peak RSS of a
/// child it starts, see `rocm-wheel`'s memory tests).
pub fn copy_nonzero(src: &Path, dst: &mut [u8]) {
    use std::io::Read;
    let mut f = std::fs::File::open(src).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut at = 0;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|&b| b != 0) {
            dst[at..at + n].copy_from_slice(&buf[..n]);
        }
        at += n;
    }
}
