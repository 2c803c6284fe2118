//! kpack split sets made here the way hip_library and the wheel rules make
//! them (a HIP host object whose `.hip_fatbin` becomes `.rocm_kpack_ref`
//! around `rocm-wheel kpack marker`'s marker, its wrapper `HIPK`; archives
//! from real gfx1200/gfx1201 code objects): `check` resolves the linked
//! binary's wrapper through its relocation, `thin --device-wheel` copies
//! the chosen device wheels (which ones: wheel-thin's tests), and `repair`
//! edits the host binary without breaking its wrapper.

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

/// A wheel built by `rocm-wheel build` (version 1.0, `out`) of `files`
/// (member path, source), requiring `requires`.
fn wheel_requiring(
    dir: &Path,
    distribution: &str,
    files: &[(&str, &str)],
    out: &str,
    requires: &[&str],
) -> PathBuf {
    let files: Vec<_> = files
        .iter()
        .map(|(path, src)| json!({"path": path, "src": src}))
        .collect();
    let m = json!({
        "distribution": distribution, "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"], "files": files,
        "metadata": {"requires_dist": requires, "provides_extra": extras(requires)},
    });
    let manifest = format!("{out}.json");
    std::fs::write(dir.join(&manifest), m.to_string()).unwrap();
    rw(dir, &["build", "--manifest", &manifest, "--output", out]).success();
    dir.join(out)
}

/// The extras `requires` name (`extra == "x"`).
fn extras(requires: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = (requires.iter())
        .filter_map(|r| r.split("extra == \"").nth(1))
        .map(|e| e.trim_end_matches('"').to_string())
        .collect();
    out.dedup();
    out
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
    kpack_host_so(dir, "k.kpackref", "k.hipk", BUILD_TREE_RUNPATH, "libk.so");
    // Its device extras, as `device-extras` writes them: what makes the
    // device wheels its own.
    let requires = [
        "demo-device-gfx1200==1.0; extra == \"device-gfx1200\"",
        "demo-device-gfx1201==1.0; extra == \"device-gfx1201\"",
        "demo-device-gfx12==1.0; extra == \"device-all\"",
    ];
    wheel_requiring(dir, "demo", &[("demo/libk.so", "libk.so")], HOST, &requires)
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
        wheel_requiring(
            dir,
            &format!("demo-device-{t}"),
            &[(&path, &format!("{t}.kpack"))],
            &device_name(t),
            &["demo==1.0"],
        );
    }
    wheel_requiring(
        dir,
        "demo-device-gfx12",
        &[
            ("demo/.kpack/gfx1200.kpack", "gfx1200.kpack"),
            ("demo/.kpack/gfx1201.kpack", "gfx1201.kpack"),
        ],
        &device_name("gfx12"),
        &["demo==1.0"],
    );
}

fn out_dir(dir: &Path) -> PathBuf {
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    out
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

/// wheel-thin's tests cover which device wheels are kept and the
/// refusals; here, `--device-wheel`'s wiring: the chosen wheels are
/// copied next to the output, which `check` accepts, and a refusal exits 1
/// without writing.
#[test]
fn thin_copies_the_chosen_device_wheels() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    let out = out_dir(dir);
    let o = format!("out/{HOST}");
    let before = snapshot(dir);
    rw(dir, &["thin", "--gfx", "gfx1201", HOST, "-o", &o]).fails(
        1,
        "a kpack host wheel: its binaries hold markers, its device code is in device wheels",
    );
    assert_unchanged(dir, &before);
    let report = rw(
        dir,
        &[
            "thin",
            "--gfx",
            "gfx1201",
            HOST,
            "-o",
            &o,
            "--device-wheel",
            &device_name("gfx1200"),
            "--device-wheel",
            &device_name("gfx1201"),
        ],
    )
    .success();
    assert_eq!(
        file_names(&out),
        vec![HOST.to_string(), device_name("gfx1201")]
    );
    assert!(
        report
            .stdout
            .contains(&format!("kept {} (gfx1201)", device_name("gfx1201"))),
        "{}",
        report.stdout
    );
    rw(
        &out,
        &["check", HOST, "--device-wheel", &device_name("gfx1201")],
    )
    .success();
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
