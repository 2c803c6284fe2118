//! Shared helpers for the integration tests: building small ELF files with
//! gcc (aarch64 and AMDGPU ones with the build root's LLVM) and packing them
//! into wheels.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use manylinux_check::{Arch, Report, Severity};
use wheel_format::Digest;

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

/// Compile C source into a shared object with gcc. `-nostdlib` keeps the
/// host's glibc out of the result, so its version requirements are exactly
/// the ones the test creates.
pub fn build_so(dir: &Path, out: &str, src: &str, extra: &[&str]) -> PathBuf {
    build_so_for(Arch::X86_64, dir, out, src, extra)
}

/// [`build_so`] for the CPU `arch`.
pub fn build_so_for(arch: Arch, dir: &Path, out: &str, src: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["-shared", "-fPIC"];
    args.extend(extra);
    build_elf(arch, dir, out, src, &args)
}

/// Compile and link C source for `arch` without the host's C library
/// (`-nostdlib`), with `args` (`-shared`, `-pie`, libraries, ...): gcc for
/// x86_64, the build root's own CPU; clang and lld for aarch64, for which
/// the build root has no gcc.
pub fn build_elf(arch: Arch, dir: &Path, out: &str, src: &str, args: &[&str]) -> PathBuf {
    let c = dir.join(format!("{out}.c"));
    std::fs::write(&c, src).unwrap();
    let o = dir.join(out);
    let mut cmd = match arch {
        Arch::X86_64 => Command::new("gcc"),
        Arch::Aarch64 => {
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
    stub_lib_for(Arch::X86_64, dir, soname, src, version_script)
}

/// [`stub_lib`] for the CPU `arch`.
pub fn stub_lib_for(
    arch: Arch,
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
    build_so_for(arch, dir, soname, src, &refs)
}

/// A glibc stand-in for `arch`: `old_fn` at GLIBC_2.17, `new_fn` first at
/// GLIBC_2.28.
pub fn glibc_stub(arch: Arch, dir: &Path) -> PathBuf {
    stub_lib_for(
        arch,
        dir,
        "libc.so.6",
        "int old_fn(void){return 1;}\nint new_fn(void){return 2;}\n",
        Some("GLIBC_2.17 { global: old_fn; local: *; };\nGLIBC_2.28 { global: new_fn; } GLIBC_2.17;\n"),
    )
}

/// A report's errors and warnings, one line each, for comparing with a
/// list (notes left out).
pub fn errors_and_warnings(r: &Report) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
        .map(|f| format!("{:?} {} {:?}: {}", f.severity, f.code, f.file, f.message))
        .collect()
}

/// Pack members into a wheel named `file_name` under `dir`. The `WHEEL`
/// file is written from `root_is_purelib` and the file name's tags.
pub fn make_wheel(
    dir: &Path,
    file_name: &str,
    root_is_purelib: bool,
    members: &[(&str, Vec<u8>)],
) -> PathBuf {
    let stem = file_name.strip_suffix(".whl").unwrap();
    let parts: Vec<&str> = stem.split('-').collect();
    let (name, version) = (parts[0], parts[1]);
    let n = parts.len();
    let (py, abi, plat) = (parts[n - 3], parts[n - 2], parts[n - 1]);
    let wheel_meta = format!(
        "Wheel-Version: 1.0\nGenerator: manylinux-check-tests\nRoot-Is-Purelib: {root_is_purelib}\nTag: {py}-{abi}-{plat}\n"
    );
    let path = dir.join(file_name);
    let f = std::fs::File::create(&path).unwrap();
    let mut zip = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default();
    for (member, bytes) in members {
        zip.start_file(*member, opts).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let dist_info = format!("{name}-{version}.dist-info");
    zip.start_file(format!("{dist_info}/WHEEL"), opts).unwrap();
    zip.write_all(wheel_meta.as_bytes()).unwrap();
    zip.start_file(format!("{dist_info}/METADATA"), opts)
        .unwrap();
    let metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    zip.write_all(metadata.as_bytes()).unwrap();
    let row = |member: &str, bytes: &[u8]| {
        let mut d = Digest::default();
        d.update(bytes);
        format!("{member},{},{}\n", d.record_hash(), d.len())
    };
    let mut record: String = members.iter().map(|(m, b)| row(m, b)).collect();
    record.push_str(&row(&format!("{dist_info}/WHEEL"), wheel_meta.as_bytes()));
    record.push_str(&row(&format!("{dist_info}/METADATA"), metadata.as_bytes()));
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    zip.start_file(format!("{dist_info}/RECORD"), opts).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}
