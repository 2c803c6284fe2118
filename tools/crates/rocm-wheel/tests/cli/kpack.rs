//! kpack split sets made here the way hip_library and the wheel rules make
//! them (a HIP host object whose `.hip_fatbin` becomes `.rocm_kpack_ref`
//! around `rocm-wheel kpack marker`'s marker, its wrapper `HIPK`; archives
//! from real gfx1200/gfx1201 code objects): `check` resolves the linked
//! binary's wrapper through its relocation, `thin` chooses device wheels,
//! and `repair` edits the host binary without breaking its wrapper.

use crate::*;
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const HOST: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";
const KEY: &str = "//demo:k/k.hip";
const TARGETS: [&str; 2] = ["gfx1200", "gfx1201"];

fn device_name(bundle: &str) -> String {
    format!("demo_device_{bundle}-1.0-py3-none-manylinux_2_17_x86_64.whl")
}

/// A wheel of `files` (archive path, file in `dir`) named `name`.
fn wheel(dir: &Path, distribution: &str, files: &[(&str, &str)], out: &str) -> PathBuf {
    let files: Vec<_> = files
        .iter()
        .map(|(path, src)| json!({"path": path, "src": src}))
        .collect();
    let m = json!({
        "distribution": distribution, "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"], "files": files,
    });
    let manifest = format!("{out}.json");
    std::fs::write(dir.join(&manifest), m.to_string()).unwrap();
    rw(dir, &["build", "--manifest", &manifest, "--output", out]).success();
    dir.join(out)
}

/// A build-tree search path, as Bazel links leave them: `repair` drops it.
const BUILD_TREE_RUNPATH: &str = "$ORIGIN/_solib_k8/_U_S_Sdemo:$ORIGIN";

/// The split set: [`host_wheel`] and [`device_wheels`] holding its key.
fn split_set(dir: &Path) -> PathBuf {
    let host = host_wheel(dir);
    device_wheels(dir, KEY);
    host
}

/// The host wheel: demo/libk.so with one HIPK wrapper whose marker names
/// [`KEY`].
fn host_wheel(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("placeholder.hipfb"), b"replaced\n").unwrap();
    hip_so(dir, "placeholder.hipfb", "unused.so");
    rw(
        dir,
        &[
            "kpack",
            "marker",
            "--kernel-name",
            KEY,
            "--search-path",
            ".kpack/@GFXARCH@.kpack",
            "--search-path",
            "../.kpack/@GFXARCH@.kpack",
            "--output",
            "k.kpackref",
            "--wrapper-output",
            "k.hipk",
        ],
    )
    .success();
    run_stdout(llvm_cmd("llvm-objcopy").current_dir(dir).args([
        "--update-section",
        ".hip_fatbin=k.kpackref",
        "--update-section",
        ".hipFatBinSegment=k.hipk",
        "--set-section-alignment",
        ".hip_fatbin=1",
        "--rename-section",
        ".hip_fatbin=.rocm_kpack_ref",
        "k.host.o",
        "k.pic.o",
    ]));
    run_stdout(
        llvm_cmd("clang++")
            .current_dir(dir)
            .args([
                "-shared",
                "-Wl,--enable-new-dtags",
                "k.pic.o",
                "-o",
                "libk.so",
            ])
            .arg(format!("-Wl,-rpath,{BUILD_TREE_RUNPATH}")),
    );
    wheel(dir, "demo", &[("demo/libk.so", "libk.so")], HOST)
}

/// An archive per target holding `key` (real gfx1200/gfx1201 code
/// objects), and device wheels: one per target and one for the gfx12
/// family.
fn device_wheels(dir: &Path, key: &str) {
    for t in TARGETS {
        copy_in(&code_object(t), dir, &format!("k.{t}.co"));
        rw(
            dir,
            &[
                "kpack",
                "archive",
                "--group",
                "demo",
                "--family",
                t,
                "--target",
                t,
                "--compression",
                "zstd",
                "--output",
                &format!("{t}.kpack"),
                "--kernel",
                &format!("{key}#0@{t}=k.{t}.co"),
            ],
        )
        .success();
        let path = format!("demo/.kpack/{t}.kpack");
        wheel(
            dir,
            &format!("demo-device-{t}"),
            &[(&path, &format!("{t}.kpack"))],
            &device_name(t),
        );
    }
    wheel(
        dir,
        "demo-device-gfx12",
        &[
            ("demo/.kpack/gfx1200.kpack", "gfx1200.kpack"),
            ("demo/.kpack/gfx1201.kpack", "gfx1201.kpack"),
        ],
        &device_name("gfx12"),
    );
}

fn out_dir(dir: &Path) -> PathBuf {
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn check_resolves_the_linked_wrapper_and_names_a_missing_target() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    let out = rw(
        dir,
        &["check", HOST, "--device-wheel", &device_name("gfx1201")],
    )
    .success();
    assert!(
        out.stdout
            .contains("ok: 1 kpack references in 1 binaries resolve for gfx1201"),
        "{}",
        out.stdout
    );
    rw(
        dir,
        &[
            "check",
            HOST,
            "--device-wheel",
            &device_name("gfx12"),
            "--gfx",
            "gfx120X-all",
        ],
    )
    .success();
    let out = rw(
        dir,
        &[
            "check",
            HOST,
            "--device-wheel",
            &device_name("gfx1201"),
            "--gfx",
            "gfx120X-all",
        ],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains("demo/libk.so") && out.stdout.contains("gfx1200"),
        "{}",
        out.stdout
    );
}

#[test]
fn thin_chooses_the_device_wheels_of_the_requested_targets() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    let out = out_dir(dir);
    let report = rw(
        dir,
        &[
            "thin",
            "--gfx",
            "gfx1201",
            HOST,
            "-o",
            &format!("out/{HOST}"),
            "--device-wheel",
            &device_name("gfx1200"),
            "--device-wheel",
            &device_name("gfx1201"),
        ],
    )
    .success();
    assert_eq!(names(&out), vec![HOST.to_string(), device_name("gfx1201")]);
    assert_eq!(
        std::fs::read(out.join(HOST)).unwrap(),
        std::fs::read(dir.join(HOST)).unwrap(),
        "host copied as it is"
    );
    assert!(
        report
            .stdout
            .contains(&format!("kept {} (gfx1201)", device_name("gfx1201"))),
        "{}",
        report.stdout
    );
    assert!(
        report
            .stdout
            .contains(&format!("left out {} (gfx1200)", device_name("gfx1200"))),
        "{}",
        report.stdout
    );
    rw(
        &out,
        &["check", HOST, "--device-wheel", &device_name("gfx1201")],
    )
    .success();

    // A family wheel serving a requested target is kept whole.
    let out2 = dir.join("out2");
    std::fs::create_dir(&out2).unwrap();
    rw(
        dir,
        &[
            "thin",
            "--gfx",
            "gfx120X-all",
            HOST,
            "-o",
            &format!("out2/{HOST}"),
            "--device-wheel",
            &device_name("gfx12"),
        ],
    )
    .success();
    assert_eq!(names(&out2), vec![HOST.to_string(), device_name("gfx12")]);
}

#[test]
fn thin_refuses_what_a_split_set_cannot_give_and_writes_nothing() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    // An archive of another library: the host's key is not in it.
    let other = tempdir();
    device_wheels(other.path(), "//other:lib/x.hip");
    let d1201 = device_name("gfx1201");
    std::fs::create_dir(dir.join("stranger")).unwrap();
    copy_in(&other.path().join(&d1201), &dir.join("stranger"), &d1201);
    let out = out_dir(dir);
    let before = snapshot(dir);
    let o = format!("out/{HOST}");
    let stranger = format!("stranger/{d1201}");
    let out_device = format!("out/{d1201}");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--gfx", "gfx1100", HOST, "-o", &o, "--device-wheel", &d1201],
            "no device wheel holds code for target gfx1100 (gfx1100); the device wheels given serve gfx1201",
        ),
        (
            &["--gfx", "gfx1201", HOST, "-o", &o],
            "a kpack host wheel: its binaries hold markers, its device code is in device wheels; \
             thin the set by choosing them: --device-wheel",
        ),
        (
            &["--gfx", "gfx1201", HOST, "-o", &o, "--device-wheel", &d1201, "--name-suffix", "x"],
            "renaming it would orphan them",
        ),
        (
            &["--gfx", "gfx1201", HOST, "-o", "out/other.whl", "--device-wheel", &d1201],
            &format!("the output must be named {HOST}"),
        ),
        (
            &["--gfx", "gfx1201", HOST, "-o", &o, "--device-wheel", &stranger],
            "has no //demo:k/k.hip#0",
        ),
        (
            &["--gfx", "gfx1201", &d1201, "-o", &out_device, "--device-wheel", &d1201],
            "no binary refers to kpack archives; --device-wheel is for kpack host wheels",
        ),
    ];
    for (args, needle) in cases {
        let argv: Vec<&str> = std::iter::once("thin")
            .chain(args.iter().copied())
            .collect();
        rw(dir, &argv).fails(1, needle);
    }
    assert_unchanged(dir, &before);
    assert!(names(&out).is_empty());
}

#[test]
fn repair_keeps_the_markers_resolving() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    let out = out_dir(dir);
    let report = rw(dir, &["repair", HOST, "-o", "out", "--json"]).success();
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    let repaired = out.join(
        report["output"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap(),
    );
    assert!(repaired.exists(), "{report}");
    let inspect = |w: &Path| -> serde_json::Value {
        serde_json::from_str(
            &rw(
                dir,
                &[OsStr::new("inspect"), OsStr::new("--json"), w.as_os_str()],
            )
            .success()
            .stdout,
        )
        .unwrap()
    };
    let before = inspect(&dir.join(HOST));
    let after = inspect(&repaired);
    let libk = |v: &serde_json::Value| v["elf_files"][0].clone();
    assert_ne!(
        libk(&before)["runpath"],
        libk(&after)["runpath"],
        "repair edited the RUNPATH"
    );
    assert_eq!(
        libk(&before)["kpack_markers"],
        libk(&after)["kpack_markers"]
    );
    rw(
        dir,
        &[
            OsStr::new("check"),
            repaired.as_os_str(),
            OsStr::new("--device-wheel"),
            OsStr::new(&device_name("gfx12")),
            OsStr::new("--gfx"),
            OsStr::new("gfx120X-all"),
        ],
    )
    .success();
}
