//! `rocm-wheel thin`: the command line over wheel-thin, whose tests
//! (tools/crates/wheel-thin/tests) cover what is kept and the refusals. Here:
//! one run on a wheel built and bundled by the binary, the report on
//! stdout, and a refusal's exit code, message and empty output directory.

use crate::*;
use serde_json::{json, Value};
use std::path::Path;

const WHEEL: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";
const ID906: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const ID90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";

/// A bundle of `ids` (code objects k.<gfx>.co) written as `out`.
fn bundle(dir: &Path, out: &str, compress: &str, ids: &[&str]) {
    let mut args = vec![
        "bundle".to_string(),
        "write".into(),
        "--output".into(),
        out.into(),
        "--compress".into(),
        compress.into(),
        "--host-triple".into(),
        "x86_64-unknown-linux-gnu".into(),
    ];
    for id in ids {
        args.push("--entry".into());
        args.push(format!("{id}=k.{}.co", gfx_of(id)));
    }
    rw(dir, &args).success();
}

/// A wheel with `sos` (name, bundle ids, compression) as shared objects
/// under demo/, plus a Python file.
fn wheel(dir: &Path, sos: &[(&str, &[&str], &str)]) -> std::path::PathBuf {
    for id in sos.iter().flat_map(|(_, ids, _)| ids.iter()) {
        let gfx = gfx_of(id);
        copy_in(&code_object(gfx), dir, &format!("k.{gfx}.co"));
    }
    std::fs::write(dir.join("__init__.py"), "").unwrap();
    let mut files = vec![json!({"path": "demo/__init__.py", "src": "__init__.py"})];
    for (name, ids, compress) in sos {
        bundle(dir, "k.hipfb", compress, ids);
        hip_so(dir, "k.hipfb", name);
        files.push(json!({"path": format!("demo/{name}"), "src": name}));
    }
    let m = json!({
        "distribution": "demo", "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"], "files": files,
    });
    std::fs::write(dir.join("m.json"), m.to_string()).unwrap();
    rw(dir, &["build", "--manifest", "m.json", "--output", WHEEL]).success();
    dir.join(WHEEL)
}

fn inspect(dir: &Path, whl: &str) -> Value {
    serde_json::from_str(&rw(dir, &["inspect", "--json", whl]).success().stdout).unwrap()
}

#[test]
fn thin_writes_the_output_and_reports_what_it_kept() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID906, ID90A], "zstd")]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = format!("out/{WHEEL}");
    let report = rw(dir, &["thin", "--gfx", "gfx90a-dcgpu", WHEEL, "-o", &out])
        .success()
        .stdout;
    assert!(
        report.contains("demo/libk.so:\n  bundle #0 at ")
            && report.contains("kept gfx90a; dropped 1 code objects"),
        "{report}"
    );
    let elf = &inspect(dir, &out)["elf_files"][0];
    assert_eq!(elf["targets"], json!({"gfx90a": 1}));
}

#[test]
fn refusals_exit_1_and_write_nothing() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID906, ID90A], "zstd")]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = format!("out/{WHEEL}");
    rw(dir, &["thin", "--gfx", "gfx1100", WHEEL, "-o", &out])
        .fails(1, "holds code for target gfx1100");
    let renamed = "out/demo_gfx90a-1.0-py3-none-manylinux_2_17_x86_64.whl";
    rw(
        dir,
        &[
            "thin",
            "--gfx",
            "gfx90a",
            "--name-suffix",
            "gfx90a",
            WHEEL,
            "-o",
            &out,
        ],
    )
    .fails(1, &format!("the output must be named {}", &renamed[4..]));
    assert_empty_dir(&dir.join("out"));
    // Usage errors are clap's.
    rw(dir, &["thin", WHEEL, "-o", &out]).fails(2, "--gfx");
    assert_empty_dir(&dir.join("out"));
}

#[test]
fn help_says_what_happens_to_the_installed_size() {
    let d = tempdir();
    let help = rw(d.path(), &["thin", "--help"]).success().stdout;
    assert!(
        help.contains("the installed size does not: each .so keeps its size"),
        "{help}"
    );
}
