//! Adversarial inputs and output hygiene: every command that writes cleans
//! up on error, readers stay within their memory bounds, bad member names are
//! refused with each reader's exit code. Inputs are committed fixtures or
//! generated (no compilers needed).

use super::*;

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

/// wheel-read's tests cover which member names are refused; here, that
/// each reader says so with its exit code, and that `build` refuses to
/// write such a wheel.
#[test]
fn bad_member_names_are_refused_by_every_command() {
    let d = tempdir();
    let dir = d.path();
    let whl = "demo-1.0-py3-none-any.whl";
    crafted_wheel(
        &dir.join(whl),
        "demo",
        "1.0",
        &[("demo/ok.py", b"x = 1\n"), ("../../etc/x", b"evil")],
        &[],
    );
    readers_refuse(dir, whl, "invalid member name");
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
    assert_empty_dir(&dir.join("out"));
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
    wheel_zip(
        &dir.join(whl),
        di,
        &[
            ("demo/a.py".into(), b"1".to_vec()),
            (format!("{di}/METADATA"), meta.to_vec()),
            (
                format!("{di}/WHEEL"),
                b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
            ),
        ],
        &[],
    );
    readers_refuse(dir, whl, "METADATA says other 2.0");
}

/// Runs the binary and returns its exit code, stderr and peak RSS in MiB
/// (getrusage of exactly this child via wait4). A small Python process
/// starts it and reads its rusage: the kernel counts the peak RSS of the
/// process that spawned a program in the program's own (exec records the
/// old memory map's high-water mark), and this test process may have been
/// large.
pub(crate) fn rw_rss(cwd: &Path, args: &[&str]) -> (Option<i32>, String, u64) {
    rw_rss_env(cwd, args, &[])
}

/// [`rw_rss`] with `env` (name, value) set for the binary.
pub(crate) fn rw_rss_env(
    cwd: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, String, u64) {
    let u = rw_usage_env(cwd, args, env);
    (u.code, u.stderr, u.rss_mib)
}

/// What one run of the binary cost, from `wait4`'s rusage.
pub(crate) struct Usage {
    /// The exit code; `None` for a signal.
    pub code: Option<i32>,
    pub stderr: String,
    /// Peak resident set size.
    pub rss_mib: u64,
    /// User plus system CPU time: unlike wall time, what other processes on
    /// a busy machine do does not change it.
    pub cpu: std::time::Duration,
}

/// Runs the binary in `cwd` with `env` set; its exit code, stderr, peak RSS
/// and CPU time.
pub(crate) fn rw_usage_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Usage {
    const WAIT4: &str = "import os, subprocess, sys\n\
        p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n\
        _, status, ru = os.wait4(p.pid, 0)\n\
        print(os.waitstatus_to_exitcode(status), ru.ru_maxrss, ru.ru_utime + ru.ru_stime)";
    let bin = std::env::var_os("ROCM_WHEEL_TEST_BIN").unwrap_or_else(|| BIN.into());
    let err = cwd.join(".stderr");
    let out = Command::new(venv_bin("python"))
        .args(["-c", WAIT4])
        .arg(bin)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    std::fs::remove_file(&err).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [code, kib, cpu] = fields[..] else {
        panic!("{args:?}: no rusage ({text:?}): {stderr}")
    };
    let code: i32 = code.parse().unwrap();
    Usage {
        // A negative code is a signal.
        code: (code >= 0).then_some(code),
        stderr,
        rss_mib: kib.parse::<u64>().unwrap() / 1024,
        cpu: std::time::Duration::from_secs_f64(cpu.parse().unwrap()),
    }
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
