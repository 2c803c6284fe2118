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
