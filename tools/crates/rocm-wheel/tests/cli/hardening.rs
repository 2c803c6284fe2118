//! Adversarial inputs and output hygiene: every command that writes cleans
//! up on error, readers stay within their memory bounds, member names are
//! checked like pip checks them, and output does not depend on --jobs.
//! Inputs are committed fixtures or generated here (no compilers needed).

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// Runs the binary under test, or the one named by ROCM_WHEEL_TEST_BIN
/// (to check that these tests catch the bugs in an older build).
fn rw<S: AsRef<OsStr>>(cwd: &Path, args: &[S]) -> Out {
    let bin = std::env::var_os("ROCM_WHEEL_TEST_BIN").unwrap_or_else(|| BIN.into());
    run_cmd(
        Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .env_remove("SOURCE_DATE_EPOCH"),
    )
}

/// A tiny x86-64 shared library without RUNPATH (committed fixture).
fn tiny_so(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../elf-edit/tests/data/tiny-none.so");
    copy_in(&src, dir, name)
}

#[test]
fn rpath_output_to_a_directory_leaves_no_temp_file() {
    let d = tempdir();
    let dir = d.path();
    tiny_so(dir, "libin.so");
    std::fs::create_dir(dir.join("outdir")).unwrap();
    let before = snapshot(dir);
    let out = rw(
        dir,
        &[
            "rpath", "set", "libin.so", "--rpath", "$ORIGIN", "-o", "outdir",
        ],
    );
    out.fails(1, "outdir is a directory");
    assert_unchanged(dir, &before);
}

fn set_xattr(p: &Path, name: &str, value: &[u8]) -> bool {
    let p = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a live buffer.
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        ) == 0
    }
}

fn get_xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let p = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = vec![0u8; 256];
    // SAFETY: as above.
    let r = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (r >= 0).then(|| {
        buf.truncate(r as usize);
        buf
    })
}

#[test]
fn in_place_rpath_keeps_owner_mode_xattrs_and_hard_links() {
    let d = tempdir();
    let dir = d.path();
    let so = tiny_so(dir, "libx.so");
    std::fs::hard_link(&so, dir.join("libx-link.so")).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&so, Some(1234), Some(2345)).unwrap();
    }
    std::fs::set_permissions(&so, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let user = set_xattr(&so, "user.rocm_wheel_test", b"kept");
    // cap_net_bind_service in the permitted set (VFS_CAP_REVISION_2).
    let mut cap = Vec::new();
    for w in [0x0200_0000u32, 1 << 10, 0, 0, 0] {
        cap.extend_from_slice(&w.to_le_bytes());
    }
    let caps = root && set_xattr(&so, "security.capability", &cap);
    let ino = std::fs::metadata(&so).unwrap().ino();

    rw(
        dir,
        &["rpath", "set", "libx.so", "--rpath", "$ORIGIN/../lib"],
    )
    .success();

    let md = std::fs::metadata(&so).unwrap();
    assert_eq!(md.ino(), ino, "the file was replaced, not edited in place");
    assert_eq!(md.nlink(), 2, "the hard link was broken");
    assert_eq!(md.mode() & 0o7777, 0o4755);
    if root {
        assert_eq!((md.uid(), md.gid()), (1234, 2345), "owner changed");
    }
    if user {
        assert_eq!(
            get_xattr(&so, "user.rocm_wheel_test").as_deref(),
            Some(&b"kept"[..])
        );
    }
    if caps {
        assert_eq!(get_xattr(&so, "security.capability"), Some(cap));
    }
    let show = rw(dir, &["rpath", "show", "libx-link.so"]).success();
    assert_eq!(show.stdout, "RUNPATH $ORIGIN/../lib\n");
}

/// xorshift64*: deterministic pseudo-random numbers for generated inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Compressible but irregular bytes: words, numbers and random runs, so
/// deflate has real match choices to make (where a stale state shows).
fn payload(rng: &mut Rng, len: usize) -> Vec<u8> {
    const WORDS: [&[u8]; 8] = [
        b"kernel ",
        b"gfx90a ",
        b"offload ",
        b"\x00\x00\x00\x01",
        b"rocm ",
        b"wheel\n",
        b"\x7fELF",
        b"hip_fatbin ",
    ];
    let mut v = Vec::with_capacity(len + 64);
    while v.len() < len {
        match rng.below(4) {
            0 => v.extend_from_slice(WORDS[rng.below(8) as usize]),
            1 => v.extend_from_slice(format!("{} ", rng.below(100_000)).as_bytes()),
            2 => {
                let n = rng.below(24) as usize;
                v.extend((0..n).map(|_| rng.next() as u8));
            }
            _ => {
                // A copy of earlier data at a random distance.
                if v.len() > 64 {
                    let from = rng.below(v.len() as u64 - 32) as usize;
                    let n = 8 + rng.below(24) as usize;
                    v.extend_from_within(from..from + n.min(v.len() - from));
                }
            }
        }
    }
    v.truncate(len);
    v
}

fn sha256_file(p: &Path) -> String {
    run_stdout(Command::new("sha256sum").arg(p))
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// Same manifest, any --jobs, any run: the same bytes. Members of at least
/// 4 MB are compressed in parallel chunks.
#[test]
fn build_output_does_not_depend_on_jobs() {
    for seed in [0x9e37_79b9_7f4a_7c15u64] {
        let d = tempdir();
        let dir = d.path();
        let mut rng = Rng(seed);
        let mut files = Vec::new();
        for i in 0..2 {
            let len = (4 << 20) + rng.below(2 << 20) as usize;
            let name = format!("demo/blob{i}.bin");
            std::fs::create_dir_all(dir.join("src/demo")).unwrap();
            std::fs::write(dir.join("src").join(&name), payload(&mut rng, len)).unwrap();
            files.push(serde_json::json!({"path": name, "src": format!("src/{name}")}));
        }
        let m = serde_json::json!({
            "distribution": "demo", "version": "1.0", "tags": ["py3-none-any"],
            "files": files,
        });
        std::fs::write(dir.join("m.json"), m.to_string()).unwrap();
        let mut sums = Vec::new();
        for jobs in ["1", "2", "3", "4", "4"] {
            std::fs::create_dir_all(dir.join(format!("out{jobs}"))).unwrap();
            let out = format!("out{jobs}/demo-1.0-py3-none-any.whl");
            rw(
                dir,
                &[
                    "build",
                    "--manifest",
                    "m.json",
                    "--output",
                    &out,
                    "--jobs",
                    jobs,
                ],
            )
            .success();
            sums.push((jobs, sha256_file(&dir.join(&out))));
        }
        assert!(
            sums.iter().all(|(_, s)| *s == sums[0].1),
            "seed {seed:#x}: sha256 by --jobs: {sums:?}"
        );
    }
}

/// A wheel written member by member: RECORD (with correct hashes),
/// METADATA and WHEEL are generated for `dist`-`version`, so the only
/// fault is the one a test puts in. `symlinks` are (name, target) pairs.
pub(crate) fn crafted_wheel(
    path: &Path,
    dist: &str,
    version: &str,
    members: &[(&str, &[u8])],
    symlinks: &[(&str, &str)],
) {
    use base64::Engine;
    use sha2::Digest;
    use std::io::Write;
    let di = format!("{dist}-{version}.dist-info");
    let mut all: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(n, d)| (n.to_string(), d.to_vec()))
        .collect();
    all.push((
        format!("{di}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n").into_bytes(),
    ));
    all.push((
        format!("{di}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
    ));
    let mut record = String::new();
    for (n, d) in &all {
        let h = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(d));
        record.push_str(&format!("{n},sha256={h},{}\n", d.len()));
    }
    for (n, _) in symlinks {
        record.push_str(&format!("{n},,\n"));
    }
    record.push_str(&format!("{di}/RECORD,,\n"));
    all.push((format!("{di}/RECORD"), record.into_bytes()));
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (n, d) in &all {
        z.start_file(n.as_str(), opts).unwrap();
        z.write_all(d).unwrap();
    }
    for (n, t) in symlinks {
        z.add_symlink(*n, *t, opts).unwrap();
    }
    z.finish().unwrap();
}

/// `check` (exit 2, bad input), `inspect` and `repair` (exit 1, no output)
/// all refuse `whl`
/// with a message containing `needle`.
#[track_caller]
fn readers_refuse(dir: &Path, whl: &str, needle: &str) {
    rw(dir, &["check", whl]).fails(2, needle);
    rw(dir, &["inspect", whl]).fails(1, needle);
    let before = snapshot(dir);
    rw(dir, &["repair", whl, "-o", "."]).fails(1, needle);
    assert_unchanged(dir, &before);
}

#[test]
fn readers_refuse_member_names_pip_refuses() {
    let d = tempdir();
    let dir = d.path();
    for (i, bad) in [
        "../../etc/x",
        "/tmp/abs",
        "demo/../../../x",
        "..\\..\\x",
        "demo-1.0.data/data/../../..",
        "C:/x",
        "demo/a\nb",
    ]
    .iter()
    .enumerate()
    {
        let whl = format!("w{i}/demo-1.0-py3-none-any.whl");
        std::fs::create_dir(dir.join(format!("w{i}"))).unwrap();
        crafted_wheel(
            &dir.join(&whl),
            "demo",
            "1.0",
            &[("demo/ok.py", b"x = 1\n"), (bad, b"evil")],
            &[],
        );
        readers_refuse(dir, &whl, "invalid member name");
    }
}

#[test]
fn file_directory_collisions_are_refused() {
    let d = tempdir();
    let dir = d.path();
    let whl = "demo-1.0-py3-none-any.whl";
    crafted_wheel(
        &dir.join(whl),
        "demo",
        "1.0",
        &[("demo/a", b"1"), ("demo/a/b.py", b"2")],
        &[],
    );
    readers_refuse(dir, whl, "NotADirectoryError");
    // build refuses the same pair before writing anything.
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a"), b"1").unwrap();
    std::fs::write(dir.join("src/b.py"), b"2").unwrap();
    let m = serde_json::json!({
        "distribution": "demo", "version": "1.0", "tags": ["py3-none-any"],
        "files": [{"path": "demo/a", "src": "src/a"}, {"path": "demo/a/b.py", "src": "src/b.py"}],
    });
    std::fs::write(dir.join("m.json"), m.to_string()).unwrap();
    std::fs::create_dir(dir.join("out")).unwrap();
    rw(
        dir,
        &[
            "build",
            "--manifest",
            "m.json",
            "--output",
            &format!("out/{whl}"),
        ],
    )
    .fails(1, "NotADirectoryError");
    assert_eq!(std::fs::read_dir(dir.join("out")).unwrap().count(), 0);
}

#[test]
fn duplicate_members_are_refused() {
    let d = tempdir();
    let dir = d.path();
    let whl = dir.join("demo-1.0-py3-none-any.whl");
    crafted_wheel(
        &whl,
        "demo",
        "1.0",
        &[("demo/x1.py", b"a"), ("demo/x2.py", b"a")],
        &[],
    );
    // Rename the second member to the first one's name (same length), in
    // its local header and central directory record.
    let mut bytes = std::fs::read(&whl).unwrap();
    let mut hits = 0;
    for i in 0..bytes.len() - 10 {
        if &bytes[i..i + 10] == b"demo/x2.py" {
            bytes[i + 6] = b'1';
            hits += 1;
        }
    }
    assert!(hits >= 2);
    std::fs::write(&whl, bytes).unwrap();
    readers_refuse(dir, "demo-1.0-py3-none-any.whl", "appears twice");
}

#[test]
fn symlink_members_are_refused() {
    let d = tempdir();
    let dir = d.path();
    let whl = "demo-1.0-py3-none-any.whl";
    crafted_wheel(
        &dir.join(whl),
        "demo",
        "1.0",
        &[("demo/a.py", b"1")],
        &[("demo/l", "/etc/passwd")],
    );
    readers_refuse(dir, whl, "symbolic link");
}

#[test]
fn check_and_inspect_agree_on_name_and_version() {
    let d = tempdir();
    let dir = d.path();
    // File name and dist-info say demo 1.0, METADATA says other 2.0;
    // RECORD is consistent.
    let whl = "demo-1.0-py3-none-any.whl";
    let di = "demo-1.0.dist-info";
    let meta = b"Metadata-Version: 2.1\nName: other\nVersion: 2.0\n";
    {
        use base64::Engine;
        use sha2::Digest;
        use std::io::Write;
        let files: Vec<(String, Vec<u8>)> = vec![
            ("demo/a.py".into(), b"1".to_vec()),
            (format!("{di}/METADATA"), meta.to_vec()),
            (
                format!("{di}/WHEEL"),
                b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
            ),
        ];
        let mut record = String::new();
        for (n, d) in &files {
            let h =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(d));
            record.push_str(&format!("{n},sha256={h},{}\n", d.len()));
        }
        record.push_str(&format!("{di}/RECORD,,\n"));
        let mut w = zip::ZipWriter::new(std::fs::File::create(dir.join(whl)).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for (n, d) in files
            .iter()
            .chain([(format!("{di}/RECORD"), record.into_bytes())].iter())
        {
            w.start_file(n.as_str(), opts).unwrap();
            w.write_all(d).unwrap();
        }
        w.finish().unwrap();
    }
    readers_refuse(dir, whl, "METADATA says other 2.0");
}

/// Runs the binary and returns its exit code, stderr and peak RSS in MiB
/// (getrusage of exactly this child via wait4).
pub(crate) fn rw_rss(cwd: &Path, args: &[&str]) -> (Option<i32>, String, u64) {
    let bin = std::env::var_os("ROCM_WHEEL_TEST_BIN").unwrap_or_else(|| BIN.into());
    let err = cwd.join(".stderr");
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let child = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let stderr = std::fs::read_to_string(&err).unwrap();
    std::fs::remove_file(&err).unwrap();
    (code, stderr, ru.ru_maxrss as u64 / 1024)
}

/// One member of a hand-written zip: stored or raw-deflated bytes, the
/// CRC and the uncompressed size the headers record (which may lie).
struct RawEntry {
    name: String,
    method: u16,
    data: Vec<u8>,
    crc: u32,
    size: u64,
}

/// Writes a zip whose entries all carry ZIP64 size fields.
fn raw_zip(path: &Path, entries: &[RawEntry]) {
    let mut out = Vec::new();
    let mut cd = Vec::new();
    let p16 = |v: &mut Vec<u8>, x: u16| v.extend_from_slice(&x.to_le_bytes());
    let p32 = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
    let p64 = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_le_bytes());
    for e in entries {
        let off = out.len() as u64;
        let mut extra = Vec::new();
        p16(&mut extra, 1);
        p16(&mut extra, 16);
        p64(&mut extra, e.size);
        p64(&mut extra, e.data.len() as u64);
        p32(&mut out, 0x0403_4b50);
        p16(&mut out, 45);
        p16(&mut out, 0);
        p16(&mut out, e.method);
        p32(&mut out, 0x0021_0000);
        p32(&mut out, e.crc);
        p32(&mut out, u32::MAX);
        p32(&mut out, u32::MAX);
        p16(&mut out, e.name.len() as u16);
        p16(&mut out, extra.len() as u16);
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&extra);
        out.extend_from_slice(&e.data);
        p32(&mut cd, 0x0201_4b50);
        p16(&mut cd, (3 << 8) | 45);
        p16(&mut cd, 45);
        p16(&mut cd, 0);
        p16(&mut cd, e.method);
        p32(&mut cd, 0x0021_0000);
        p32(&mut cd, e.crc);
        p32(&mut cd, u32::MAX);
        p32(&mut cd, u32::MAX);
        p16(&mut cd, e.name.len() as u16);
        p16(&mut cd, extra.len() as u16);
        p16(&mut cd, 0);
        p16(&mut cd, 0);
        p16(&mut cd, 0);
        p32(&mut cd, 0o100644 << 16);
        p32(&mut cd, off as u32);
        cd.extend_from_slice(e.name.as_bytes());
        cd.extend_from_slice(&extra);
    }
    let cd_off = out.len() as u32;
    let cd_len = cd.len() as u32;
    out.extend_from_slice(&cd);
    p32(&mut out, 0x0605_4b50);
    p32(&mut out, 0);
    p16(&mut out, entries.len() as u16);
    p16(&mut out, entries.len() as u16);
    p32(&mut out, cd_len);
    p32(&mut out, cd_off);
    p16(&mut out, 0);
    std::fs::write(path, out).unwrap();
}

/// A wheel `demo-1.0` holding `elf_name` = `head` followed by `zeros` zero
/// bytes, deflated without ever materialising the member; `claim`
/// overrides the size the headers record.
pub(crate) fn bomb_wheel(path: &Path, head: &[u8], zeros: u64, claim: Option<u64>) {
    use base64::Engine;
    use flate2::{Compress, Compression, Crc, FlushCompress};
    use sha2::Digest;
    const UNIT: usize = 1 << 20;
    let deflate = |c: &mut Compress, data: &[u8], flush| {
        let mut out = Vec::with_capacity(data.len() + 1024);
        c.compress_vec(data, &mut out, flush).unwrap();
        out
    };
    assert!(zeros >= UNIT as u64 && zeros & (UNIT as u64 - 1) == 0);
    // The first unit starts the zero run; every later unit of zeros after
    // zeros compresses to the same bytes, so it is made once and repeated.
    let mut c = Compress::new(Compression::new(6), false);
    let mut z = deflate(&mut c, head, FlushCompress::Sync);
    z.extend(deflate(&mut c, &vec![0u8; UNIT], FlushCompress::Sync));
    let mut c2 = Compress::new(Compression::new(6), false);
    c2.set_dictionary(&vec![0u8; 32 << 10]).unwrap();
    let unit = deflate(&mut c2, &vec![0u8; UNIT], FlushCompress::Sync);
    let mut sha = sha2::Sha256::new();
    let mut crc = Crc::new();
    sha.update(head);
    crc.update(head);
    let zero_unit = vec![0u8; UNIT];
    let mut unit_crc = Crc::new();
    unit_crc.update(&zero_unit);
    for i in 0..zeros / UNIT as u64 {
        if i > 0 {
            z.extend_from_slice(&unit);
        }
        sha.update(&zero_unit);
        crc.combine(&unit_crc);
    }
    let mut c3 = Compress::new(Compression::new(6), false);
    z.extend(deflate(&mut c3, &[], FlushCompress::Finish));
    let size = head.len() as u64 + zeros;
    let h = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha.finalize());
    let di = "demo-1.0.dist-info";
    let meta = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n".to_vec();
    let wheel =
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n"
            .to_vec();
    let mut record = format!("demo/libbomb.so,sha256={h},{size}\n");
    let mut entries = vec![RawEntry {
        name: "demo/libbomb.so".into(),
        method: 8,
        data: z,
        crc: crc.sum(),
        size: claim.unwrap_or(size),
    }];
    for (n, d) in [
        (format!("{di}/METADATA"), meta),
        (format!("{di}/WHEEL"), wheel),
    ] {
        let hh = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(&d));
        record.push_str(&format!("{n},sha256={hh},{}\n", d.len()));
        let mut c = Crc::new();
        c.update(&d);
        entries.push(RawEntry {
            name: n,
            method: 0,
            crc: c.sum(),
            size: d.len() as u64,
            data: d,
        });
    }
    record.push_str(&format!("{di}/RECORD,,\n"));
    let mut c = Crc::new();
    c.update(record.as_bytes());
    entries.push(RawEntry {
        name: format!("{di}/RECORD"),
        method: 0,
        crc: c.sum(),
        size: record.len() as u64,
        data: record.into_bytes(),
    });
    raw_zip(path, &entries);
}

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../elf-edit/tests/data")
            .join(name),
    )
    .unwrap()
}

pub(crate) const WHL: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";

#[test]
fn a_lying_zip64_size_is_an_error_not_an_allocation() {
    let d = tempdir();
    let dir = d.path();
    bomb_wheel(
        &dir.join(WHL),
        &fixture("tiny-none.so"),
        1 << 20,
        Some(1 << 40),
    );
    for (argv, want) in [(["check", WHL], 2), (["inspect", WHL], 1)] {
        let (code, err, rss) = rw_rss(dir, &argv);
        assert_eq!(code, Some(want), "{argv:?}: {err}");
        assert!(
            err.contains("shorter than the 1099511627776 bytes"),
            "{argv:?}: {err}"
        );
        assert!(rss < 64, "{argv:?}: peak RSS {rss} MiB");
    }
}

/// A 256 MiB ELF member (64- and 32-bit) in a small wheel: the readers keep
/// what they parse, not the member.
#[test]
fn zip_bomb_elf_members_stay_within_memory_bounds() {
    let d = tempdir();
    let dir = d.path();
    for fixture_name in ["tiny-none.so", "i386.so"] {
        let head = fixture(fixture_name);
        bomb_wheel(&dir.join(WHL), &head, 256 << 20, None);
        assert!(std::fs::metadata(dir.join(WHL)).unwrap().len() < 1 << 20);
        for argv in [["check", WHL], ["inspect", WHL]] {
            let (code, err, rss) = rw_rss(dir, &argv);
            assert!(!err.contains("memory allocation"), "{argv:?}: {err}");
            assert!(
                code == Some(0) || code == Some(1),
                "{fixture_name} {argv:?}: {code:?} {err}"
            );
            eprintln!("{fixture_name} {argv:?}: peak RSS {rss} MiB");
            assert!(rss < 100, "{fixture_name} {argv:?}: peak RSS {rss} MiB");
        }
    }
}

/// The ELF header of a gfx90a code object, padded with zeros to `len`.
fn padded_code_object(len: usize) -> Vec<u8> {
    let mut e = vec![0u8; len];
    e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
    e[8] = 3; // code object v5
    e[16] = 3; // ET_DYN
    e[18..20].copy_from_slice(&224u16.to_le_bytes()); // EM_AMDGPU
    e[48..52].copy_from_slice(&(0x3fu32 | 0x100).to_le_bytes()); // gfx90a, xnack any
    e[52] = 64;
    e
}

/// Three CCOB bundles of 128 MiB each, back to back in a small file:
/// `list` holds no payload, `extract` one bundle's payload (decoded in one
/// pass into a buffer of the announced size, no zstd window besides it).
#[test]
fn bundle_readers_hold_at_most_one_bundle() {
    let d = tempdir();
    let dir = d.path();
    std::fs::write(dir.join("k.co"), padded_code_object(128 << 20)).unwrap();
    let w = rw(
        dir,
        &[
            "bundle",
            "write",
            "--output",
            "one.hipfb",
            "--compress",
            "zstd",
            "--host-triple",
            "x86_64-unknown-linux-gnu",
            "--entry",
            "hipv4-amdgcn-amd-amdhsa--gfx90a=k.co",
        ],
    );
    w.success();
    std::fs::remove_file(dir.join("k.co")).unwrap();
    let one = std::fs::read(dir.join("one.hipfb")).unwrap();
    std::fs::write(dir.join("three.hipfb"), one.repeat(3)).unwrap();
    let (code, err, rss) = rw_rss(dir, &["bundle", "list", "three.hipfb"]);
    assert_eq!(code, Some(0), "{err}");
    eprintln!("bundle list: peak RSS {rss} MiB");
    assert!(rss < 16, "bundle list: peak RSS {rss} MiB");
    let (code, err, rss) = rw_rss(
        dir,
        &[
            "bundle",
            "extract",
            "three.hipfb",
            "--target",
            "gfx90a",
            "--bundle",
            "2",
            "--output",
            "x.co",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    eprintln!("bundle extract: peak RSS {rss} MiB");
    // One decompressed bundle plus a small constant.
    assert!(rss < 128 + 16, "bundle extract: peak RSS {rss} MiB");
    assert_eq!(
        std::fs::metadata(dir.join("x.co")).unwrap().len(),
        128 << 20
    );
}
