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
    let src = test_support::manifest_dir().join("../elf-edit/tests/data/tiny-none.so");
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
/// (getrusage of exactly this child via wait4). A small Python process
/// starts it and reads its rusage: the kernel counts the peak RSS of the
/// process that spawned a program in the program's own (exec records the
/// old memory map's high-water mark), and this test process may have been
/// large.
pub(crate) fn rw_rss(cwd: &Path, args: &[&str]) -> (Option<i32>, String, u64) {
    const WAIT4: &str = "import os, subprocess, sys\n\
        p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n\
        _, status, ru = os.wait4(p.pid, 0)\n\
        print(os.waitstatus_to_exitcode(status), ru.ru_maxrss)";
    let bin = std::env::var_os("ROCM_WHEEL_TEST_BIN").unwrap_or_else(|| BIN.into());
    let err = cwd.join(".stderr");
    let out = Command::new(venv_bin("python"))
        .args(["-c", WAIT4])
        .arg(bin)
        .args(args)
        .current_dir(cwd)
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    std::fs::remove_file(&err).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (code, kib) = text
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{args:?}: no rusage ({text:?}): {stderr}"));
    let code: i32 = code.parse().unwrap();
    // A negative code is a signal.
    let code = (code >= 0).then_some(code);
    (code, stderr, kib.parse::<u64>().unwrap() / 1024)
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
        test_support::manifest_dir()
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

/// A wheel `demo-1.0` (manylinux tag) with `count` members made one at a
/// time by `member(i)` (name, bytes), so only one is ever held here.
fn generated_wheel(path: &Path, count: usize, mut member: impl FnMut(usize) -> (String, Vec<u8>)) {
    use base64::Engine;
    use sha2::Digest;
    use std::io::Write;
    let di = "demo-1.0.dist-info";
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(true);
    let mut record = String::new();
    let mut add = |z: &mut zip::ZipWriter<std::fs::File>, name: &str, data: &[u8]| {
        let h = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(data));
        record.push_str(&format!("{name},sha256={h},{}\n", data.len()));
        z.start_file(name, opts).unwrap();
        z.write_all(data).unwrap();
    };
    for i in 0..count {
        let (name, data) = member(i);
        add(&mut z, &name, &data);
    }
    add(
        &mut z,
        &format!("{di}/METADATA"),
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
    );
    add(
        &mut z,
        &format!("{di}/WHEEL"),
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n",
    );
    record.push_str(&format!("{di}/RECORD,,\n"));
    z.start_file(format!("{di}/RECORD"), opts).unwrap();
    z.write_all(record.as_bytes()).unwrap();
    z.finish().unwrap();
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

/// What [`synthetic_so`] puts in a shared object.
struct SoShape<'a> {
    soname: &'a str,
    /// Bytes of `.dynstr` (symbol-like names after the needed ones).
    dynstr: usize,
    /// Where `.hip_fatbin` starts and its size (the caller fills it).
    fatbin: Option<(u64, u64)>,
    /// Total file size; zeros fill what the parts do not.
    size: usize,
}

/// An x86-64 shared object as linkers lay one out: headers, `.dynsym`,
/// `.dynstr` and `.dynamic` at the start of one `PT_LOAD` that covers the
/// file, `.hip_fatbin` where asked, `.shstrtab` and the section headers at
/// the end. `DT_NEEDED` libc.so.6, `DT_SONAME`, `DT_RUNPATH` `$ORIGIN`.
fn synthetic_so(s: &SoShape) -> Vec<u8> {
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
/// so this process's peak stays small (it counts in what `rw_rss` reports).
fn copy_nonzero(src: &Path, dst: &mut [u8]) {
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

/// `inspect` and `check` of `whl` (in `dir`): both succeed (check may
/// report findings) within `bound` MiB of peak RSS; returns inspect's JSON.
#[track_caller]
fn readers_within(dir: &Path, whl: &str, bound: u64) -> serde_json::Value {
    let mut report = None;
    for argv in [["inspect", "--json", whl], ["check", "--json", whl]] {
        let (code, err, rss) = rw_rss(dir, &argv);
        eprintln!("{argv:?}: peak RSS {rss} MiB");
        assert!(
            code == Some(0) || code == Some(1),
            "{argv:?}: {code:?} {err}"
        );
        assert!(
            rss <= bound,
            "{argv:?}: peak RSS {rss} MiB, bound {bound} MiB"
        );
        if argv[0] == "inspect" {
            assert_eq!(code, Some(0), "{err}");
            let out = rw(dir, &argv);
            report = Some(serde_json::from_str(&out.stdout).unwrap());
        }
    }
    report.unwrap()
}

/// 64 shared objects of 8 to 40 MiB, no offload bundles: members up to
/// 32 MiB are read whole, larger ones sparsely, and each is dropped before
/// the next, so memory does not grow with the wheel (the readers used to
/// keep a previous member's buffer resident).
#[test]
fn many_elf_members_stay_within_64_mb() {
    let d = tempdir();
    let dir = d.path();
    let mut rng = Rng(0x5eed);
    generated_wheel(&dir.join(WHL), 64, |i| {
        let mib = if i % 2 == 0 {
            8 + rng.below(24)
        } else {
            33 + rng.below(8)
        };
        let soname = format!("libm{i}.so");
        let so = synthetic_so(&SoShape {
            soname: &soname,
            dynstr: (1 << 20) + rng.below(2 << 20) as usize,
            fatbin: None,
            size: (mib << 20) as usize - rng.below(4096) as usize,
        });
        (format!("demo/{soname}"), so)
    });
    let r = readers_within(dir, WHL, 64);
    let elf = r["elf_files"].as_array().unwrap();
    assert_eq!(elf.len(), 64);
    for (i, e) in elf.iter().enumerate() {
        assert_eq!(e["soname"], format!("libm{i}.so"), "{e}");
        assert_eq!(e["needed"], serde_json::json!(["libc.so.6"]), "{e}");
        assert_eq!(e["runpath"], serde_json::json!(["$ORIGIN"]), "{e}");
    }
}

/// A 200 MiB shared object whose `.hip_fatbin` holds a 96 MiB bundle
/// (made of zeros that this process never touches, see [`copy_nonzero`]):
/// `inspect` holds the section once (not also in a read buffer) and
/// stays within 64 MB plus it; `check` does not read it.
#[test]
fn a_large_hip_fatbin_is_held_once() {
    let d = tempdir();
    let dir = d.path();
    std::fs::write(dir.join("k.co"), padded_code_object(96 << 20)).unwrap();
    rw(
        dir,
        &[
            "bundle",
            "write",
            "--output",
            "k.hipfb",
            "--host-triple",
            "x86_64-unknown-linux-gnu",
            "--entry",
            "hipv4-amdgcn-amd-amdhsa--gfx90a=k.co",
        ],
    )
    .success();
    std::fs::remove_file(dir.join("k.co")).unwrap();
    let fatbin_len = std::fs::metadata(dir.join("k.hipfb")).unwrap().len();
    generated_wheel(&dir.join(WHL), 1, |_| {
        let mut so = synthetic_so(&SoShape {
            soname: "libk.so",
            dynstr: 1 << 20,
            fatbin: Some((32 << 20, fatbin_len)),
            size: 200 << 20,
        });
        copy_nonzero(&dir.join("k.hipfb"), &mut so[32 << 20..]);
        ("demo/libk.so".into(), so)
    });
    let r = readers_within(dir, WHL, 64 + 96);
    let e = &r["elf_files"][0];
    assert_eq!(e["targets"], serde_json::json!({"gfx90a": 1}), "{e}");
    assert_eq!(e["bundles"][0]["entries"][1]["size"], 96 << 20, "{e}");
}
