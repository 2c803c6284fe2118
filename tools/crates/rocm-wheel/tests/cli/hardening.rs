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
    tool_ok(Command::new("sha256sum").arg(p))
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
fn crafted_wheel(
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

/// `check` (exit 2, bad input) and `inspect` (exit 1) both refuse `whl`
/// with a message containing `needle`.
#[track_caller]
fn readers_refuse(dir: &Path, whl: &str, needle: &str) {
    rw(dir, &["check", whl]).fails(2, needle);
    rw(dir, &["inspect", whl]).fails(1, needle);
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
