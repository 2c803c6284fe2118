//! `rocm-wheel check` (exit 0/1/2, `--json` schema) and `rocm-wheel inspect`
//! on wheels written by `rocm-wheel build`, and on broken ones.

use crate::*;
use serde_json::{json, Value};
use std::path::Path;

const PLAT: &str = "py3-none-manylinux_2_17_x86_64";
const WHEEL: &str = "rocmdemo-0.1-py3-none-manylinux_2_17_x86_64.whl";

/// Builds, through the CLI, a platform wheel holding a real x86-64 shared
/// library (its RUNPATH set by `rpath set` to `runpath`) and a `.hipfb` of
/// two real code objects. Returns the wheel's path.
fn platform_wheel(dir: &Path, runpath: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/__init__.py"), "").unwrap();
    host_so(&dir.join("src"), "libdemo.so");
    rw(dir, &["rpath", "set", "src/libdemo.so", "--rpath", runpath]).success();
    copy_in(&code_object("gfx906"), &dir.join("src"), "a.co");
    copy_in(&code_object("gfx90a"), &dir.join("src"), "b.co");
    rw(
        &dir.join("src"),
        &[
            "bundle",
            "write",
            "--output",
            "kernels.hipfb",
            "--compress",
            "zstd",
            "--host-triple",
            "x86_64-unknown-linux-gnu",
            "--entry",
            "hipv4-amdgcn-amd-amdhsa--gfx906=a.co",
            "--entry",
            "hipv4-amdgcn-amd-amdhsa--gfx90a=b.co",
        ],
    )
    .success();
    let m = json!({
        "distribution": "rocmdemo",
        "version": "0.1",
        "tags": [PLAT],
        "files": [
            {"path": "rocmdemo/__init__.py", "src": "src/__init__.py"},
            {"path": "rocmdemo/libdemo.so", "src": "src/libdemo.so"},
            {"path": "rocmdemo/kernels.hipfb", "src": "src/kernels.hipfb"}
        ]
    });
    std::fs::write(dir.join("m.json"), m.to_string()).unwrap();
    rw(dir, &["build", "--manifest", "m.json", "--output", WHEEL]).success();
    dir.join(WHEEL)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// Asserts `v` has exactly the documented keys, each of the given JSON
/// type ("s" string, "n" number, "b" bool, "a" array, "o" object; a
/// trailing "?" allows null).
#[track_caller]
fn assert_schema(v: &Value, fields: &[(&str, &str)]) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort();
    let mut want: Vec<&str> = fields.iter().map(|f| f.0).collect();
    want.sort();
    assert_eq!(keys, want, "keys of {v}");
    for (k, ty) in fields {
        let x = &obj[*k];
        if x.is_null() && ty.ends_with('?') {
            continue;
        }
        let ok = match ty.trim_end_matches('?') {
            "s" => x.is_string(),
            "n" => x.is_u64(),
            "b" => x.is_boolean(),
            "a" => x.is_array(),
            "o" => x.is_object(),
            t => panic!("bad type {t}"),
        };
        assert!(ok, "{k} should be {ty}: {x}");
    }
}

/// The `check --json` schema of tools/crates/manylinux-check/README.md.
fn assert_check_schema(v: &Value) {
    assert_schema(
        v,
        &[
            ("schema_version", "n"),
            ("wheel", "s"),
            ("arch", "s"),
            ("claimed_platform_tags", "a"),
            ("root_is_purelib", "b?"),
            ("target_policy", "s?"),
            ("platform_tag", "s?"),
            ("elfs", "a"),
            ("findings", "a"),
            ("summary", "o"),
        ],
    );
    assert_eq!(v["schema_version"], 1);
    for e in v["elfs"].as_array().unwrap() {
        assert_schema(
            e,
            &[
                ("path", "s"),
                ("kind", "s"),
                ("machine", "s"),
                ("soname", "s?"),
                ("needed", "a"),
                ("rpath", "a"),
                ("runpath", "a"),
                ("version_requirements", "o"),
                ("bundled", "o"),
                ("allowed_external", "a"),
                ("system", "a"),
                ("unresolved", "a"),
                ("isa_needed", "s?"),
                ("platform_tag", "s?"),
            ],
        );
    }
    for f in v["findings"].as_array().unwrap() {
        assert_schema(
            f,
            &[
                ("severity", "s"),
                ("code", "s"),
                ("file", "s?"),
                ("message", "s"),
                ("hint", "s"),
            ],
        );
        assert!(
            ["error", "warning", "info"].contains(&f["severity"].as_str().unwrap()),
            "{f}"
        );
    }
    assert_schema(
        &v["summary"],
        &[("errors", "n"), ("warnings", "n"), ("infos", "n")],
    );
    // The summary counts the findings.
    for (key, sev) in [
        ("errors", "error"),
        ("warnings", "warning"),
        ("infos", "info"),
    ] {
        let n = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == sev)
            .count();
        assert_eq!(v["summary"][key], n, "{key}");
    }
}

#[test]
fn check_clean_wheel_exits_0() {
    let d = tempdir();
    let dir = d.path();
    platform_wheel(dir, "$ORIGIN");
    let before = snapshot(dir);
    let v = parse(&rw(dir, &["check", "--json", WHEEL]).success().stdout);
    assert_check_schema(&v);
    assert_eq!(v["wheel"], WHEEL);
    assert_eq!(v["claimed_platform_tags"], json!(["manylinux_2_17_x86_64"]));
    assert_eq!(v["target_policy"], "manylinux_2_17_x86_64");
    assert_eq!(v["root_is_purelib"], false);
    // The code-object bundle is not an ELF file; the library is the only one.
    let elfs = v["elfs"].as_array().unwrap();
    assert_eq!(elfs.len(), 1, "{v}");
    assert_eq!(elfs[0]["path"], "rocmdemo/libdemo.so");
    assert_eq!(elfs[0]["kind"], "shared-object");
    assert_eq!(elfs[0]["machine"], "x86_64");
    assert_eq!(elfs[0]["runpath"], json!(["$ORIGIN"]));
    assert_eq!(v["summary"]["errors"], 0);

    // The human report ends with the summary line.
    let text = rw(dir, &["check", WHEEL]).success().stdout;
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("{WHEEL}: 1 ELF file(s); ")) && last.contains("0 error(s)"),
        "{text}"
    );
    // An older policy than the claim is still a valid target.
    rw(dir, &["check", "--policy", "manylinux_2_28", WHEEL]).success();
    // Checking never writes anything.
    assert_unchanged(dir, &before);
}

#[test]
fn check_findings_exit_1() {
    let d = tempdir();
    let dir = d.path();
    platform_wheel(dir, "/home/ci/bazel-out/k8-opt/bin/_solib_k8");
    let before = snapshot(dir);
    let out = rw(dir, &["check", "--json", WHEEL]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let v = parse(&out.stdout);
    assert_check_schema(&v);
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"rpath-build-tree"), "{v}");
    let out = rw(dir, &["check", WHEEL]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let text = out.stdout;
    assert!(
        text.lines()
            .any(|l| l.starts_with("error[rpath-build-tree] rocmdemo/libdemo.so: ")),
        "{text}"
    );
    assert_unchanged(dir, &before);
}

/// wheel-inspect's tests cover what `inspect` reports; here, its two
/// outputs on a wheel the binary built.
#[test]
fn inspect_prints_text_and_json() {
    let d = tempdir();
    let dir = d.path();
    platform_wheel(dir, "$ORIGIN/../rocm/lib");
    let v = parse(&rw(dir, &["inspect", "--json", WHEEL]).success().stdout);
    assert_eq!(v["kind"], "wheel");
    assert_eq!(v["wheel"]["filename"], WHEEL);
    assert_eq!(
        v["bundle_files"][0]["targets"],
        json!({"gfx906": 1, "gfx90a": 1})
    );
    let text = rw(dir, &["inspect", WHEEL]).success().stdout;
    assert!(text.starts_with(&format!("wheel {WHEEL}\n")), "{text}");
}

/// Broken wheels next to a good one: (file, check's message, inspect's).
fn broken_wheels(dir: &Path) -> Vec<(String, &'static str, &'static str)> {
    platform_wheel(dir, "$ORIGIN");
    let good = std::fs::read(dir.join(WHEEL)).unwrap();
    for sub in ["not-zip", "not-wheel", "cut", "library-modified"] {
        std::fs::create_dir(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("not-zip").join(WHEEL), "just text\n").unwrap();
    zip_of(
        &dir.join("not-wheel").join(WHEEL),
        &[("rocmdemo/__init__.py", b""), ("README", b"hi\n")],
    );
    std::fs::write(dir.join("cut").join(WHEEL), &good[..good.len() / 2]).unwrap();
    // Still a valid library, but `answer()` now returns 43: the code
    // changed, RECORD did not.
    let mut so = std::fs::read(dir.join("src/libdemo.so")).unwrap();
    let mov = so
        .windows(5)
        .position(|w| w == b"\xb8\x2a\x00\x00\x00")
        .expect("mov $42, %eax in libdemo.so");
    so[mov + 1] = 43;
    tamper(
        &dir.join(WHEEL),
        &dir.join("library-modified").join(WHEEL),
        "rocmdemo/libdemo.so",
        &so,
    );
    vec![
        (
            format!("not-zip/{WHEEL}"),
            "is not a zip archive",
            "not a wheel, ELF file (.so/.o/code object), offload bundle or kpack archive",
        ),
        (
            format!("not-wheel/{WHEEL}"),
            "is a zip archive but not a wheel: it has no top-level *.dist-info/WHEEL file",
            "a zip archive but not a wheel: no top-level *.dist-info/WHEEL",
        ),
        (
            format!("cut/{WHEEL}"),
            "is not a zip archive",
            "not a readable zip archive",
        ),
        (format!("missing/{WHEEL}"), "cannot open", "cannot open"),
    ]
}

#[test]
fn broken_wheels_fail_with_documented_codes() {
    let d = tempdir();
    let dir = d.path();
    let cases = broken_wheels(dir);
    let before = snapshot(dir);
    for (file, check_msg, inspect_msg) in &cases {
        rw(dir, &["check", file]).fails(2, check_msg);
        rw(dir, &["check", "--json", file]).fails(2, check_msg);
        rw(dir, &["inspect", file]).fails(1, inspect_msg);
        rw(dir, &["inspect", "--json", file]).fails(1, inspect_msg);
    }
    rw(dir, &["inspect", &format!("library-modified/{WHEEL}")])
        .fails(1, "RECORD hash mismatch for rocmdemo/libdemo.so");
    // Usage errors: exit 2 as documented.
    rw(dir, &["check", "--policy", "manylinux_9_99", WHEEL]).fails(2, "unknown policy");
    rw(dir, &["check"]).fails(2, "<WHEEL>");
    rw(dir, &["check", WHEEL, "--bogus"]).fails(2, "--bogus");
    rw(dir, &["inspect"]).fails(2, "<PATH>");
    assert_unchanged(dir, &before);
}

#[test]
fn check_rejects_record_mismatch() {
    let d = tempdir();
    let dir = d.path();
    broken_wheels(dir);
    let before = snapshot(dir);
    rw(dir, &["check", &format!("library-modified/{WHEEL}")])
        .fails(2, "RECORD hash mismatch for rocmdemo/libdemo.so");
    assert_unchanged(dir, &before);
}
