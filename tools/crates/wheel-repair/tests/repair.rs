//! Repairing wheels that hold gcc-built shared objects with build-tree
//! search paths: what is kept and dropped, purelib, the tag, the bytes
//! outside the dynamic strings, idempotence and the refusals (nothing
//! written). Results are read back by LLVM's readelf, the checker
//! (manylinux-check) and `wheel unpack`.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use test_support::*;

const IN: &str = "demo-1.0-py3-none-any.whl";

/// Repairs `dir/input` into `dir/output`; the report as its JSON.
fn repair(dir: &Path, input: &str, output: &str, plat: Option<&str>) -> anyhow::Result<Value> {
    let r = wheel_repair::repair(&dir.join(input), &dir.join(output), plat)?;
    Ok(serde_json::from_str(&r.to_json()).unwrap())
}

/// `repair` refuses with an error containing every one of `needles`.
#[track_caller]
fn refused(r: anyhow::Result<Value>, needles: &[&str]) {
    let e = format!("{:#}", r.expect_err("the repair should have been refused"));
    for n in needles {
        assert!(e.contains(n), "{n:?} not in: {e}");
    }
}

/// (offset, size) of the sections `names` by llvm-readelf.
fn sections(so: &Path, names: &[&str]) -> Vec<(usize, usize)> {
    let out = run_stdout(llvm_cmd("llvm-readelf").args(["-S", "--wide"]).arg(so));
    names
        .iter()
        .map(|n| {
            let line = out.lines().find(|l| l.contains(&format!(" {n} "))).unwrap();
            let f: Vec<&str> = line.split_whitespace().collect();
            let i = f.iter().position(|x| x == n).unwrap();
            let hex = |s: &str| usize::from_str_radix(s, 16).unwrap();
            (hex(f[i + 3]), hex(f[i + 4]))
        })
        .collect()
}

#[test]
fn drops_build_tree_entries_sets_platlib_and_the_tag() {
    let d = tempdir();
    let dir = d.path();
    let ext = dirty_wheel(dir, ANSWER_C, &[]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let r = repair(dir, IN, "out", None).unwrap();
    assert_eq!(r["changed"], true);
    assert_eq!(r["root_is_purelib"]["before"], true);
    assert_eq!(r["root_is_purelib"]["after"], false);
    let tag = r["proven_platform_tag"].as_str().unwrap().to_string();
    assert!(tag.starts_with("manylinux_2_"), "{tag}");
    assert_eq!(r["platform_tags"]["after"][0], tag.as_str());
    let e = &r["elfs"][0];
    assert_eq!(e["path"], "demo/_ext.so");
    assert_eq!(e["kind"], "DT_RUNPATH");
    assert_eq!(e["after"].as_array().unwrap().len(), 3);
    let reasons: Vec<&str> = (e["entries"].as_array().unwrap().iter())
        .map(|x| x["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "in-wheel",
            "build-tree",
            "absolute",
            "rocm-sdk",
            "not-in-wheel",
            "absolute",
            "rocm-install",
            "not-in-wheel",
            "duplicate"
        ]
    );
    let repaired = dir.join(format!("out/demo-1.0-py3-none-{tag}.whl"));
    assert_eq!(r["output"], repaired.display().to_string());
    // The new RUNPATH, read by LLVM.
    std::fs::write(dir.join("new.so"), member(&repaired, "demo/_ext.so")).unwrap();
    let dynamic = run_stdout(llvm_cmd("llvm-readelf").arg("-d").arg(dir.join("new.so")));
    assert!(
        dynamic.contains(&format!("Library runpath: [{CLEAN_RUNPATH}]")),
        "{dynamic}"
    );
    // Same size; only .dynstr changed (the shorter string over the old).
    let new = std::fs::read(dir.join("new.so")).unwrap();
    assert_eq!(new.len(), ext.len());
    let (off, size) = sections(&dir.join("_ext.so"), &[".dynstr"])[0];
    assert_eq!(new[..off], ext[..off]);
    assert_eq!(new[off + size..], ext[off + size..]);
    assert_ne!(new[off..off + size], ext[off..off + size]);
    output_is_clean(dir, &repaired, &tag);
}

/// The repaired wheel's WHEEL says platlib and `tag`; the checker finds
/// no error and no rpath or purelib problem; `wheel unpack` accepts RECORD.
fn output_is_clean(dir: &Path, repaired: &Path, tag: &str) {
    let wheel = String::from_utf8(member(repaired, "demo-1.0.dist-info/WHEEL")).unwrap();
    assert!(wheel.contains("Root-Is-Purelib: false\n"), "{wheel}");
    assert!(wheel.contains(&format!("Tag: py3-none-{tag}\n")), "{wheel}");
    let opts = manylinux_check::Options::with_extra(None, false, Vec::new(), Vec::new());
    let c: Value = serde_json::from_str(
        &manylinux_check::check_wheel_file(repaired, &opts)
            .unwrap()
            .to_json(),
    )
    .unwrap();
    for f in c["findings"].as_array().unwrap() {
        let code = f["code"].as_str().unwrap();
        // The SDK directory is another package's: a note, nothing more.
        let sdk_note = code == "rpath-outside-wheel" && f["severity"] == "info";
        assert!(
            sdk_note || !code.starts_with("rpath-") && !code.contains("purelib"),
            "{f}"
        );
        assert_ne!(f["severity"], "error", "{f}");
    }
    assert_eq!(c["platform_tag"], tag);
    // `wheel unpack` verifies RECORD.
    run_stdout(
        Command::new(venv_bin("wheel"))
            .args(["unpack", "-d"])
            .arg(dir.join("unpacked"))
            .arg(repaired),
    );
}

#[test]
fn a_repaired_wheel_is_copied_unchanged() {
    let d = tempdir();
    let dir = d.path();
    dirty_wheel(dir, ANSWER_C, &[]);
    std::fs::create_dir_all(dir.join("once")).unwrap();
    std::fs::create_dir_all(dir.join("twice")).unwrap();
    let r = repair(dir, IN, "once", None).unwrap();
    let once = Path::new(r["output"].as_str().unwrap()).to_path_buf();
    let name = once.file_name().unwrap().to_str().unwrap().to_string();
    let once_rel = format!("once/{name}");
    let again = wheel_repair::repair(&once, &dir.join("twice"), None).unwrap();
    assert!(
        again.to_human().contains("nothing to repair"),
        "{}",
        again.to_human()
    );
    assert_eq!(
        std::fs::read(&once).unwrap(),
        std::fs::read(dir.join("twice").join(&name)).unwrap()
    );
    let again = repair(dir, &once_rel, "twice", None).unwrap();
    assert_eq!(again["changed"], false);
    assert_eq!(again["elfs"].as_array().unwrap().len(), 0);
}

#[test]
fn refusals_leave_no_output() {
    let d = tempdir();
    let dir = d.path();
    // A library the wheel does not bundle and no policy allows.
    runpath_so(
        dir,
        "libfoo.so",
        "int foo(void) { return 1; }\n",
        "$ORIGIN",
        &[],
    );
    let foo = "int foo(void); int answer(void) { return foo(); }\n";
    dirty_wheel(dir, foo, &["-L.", "-lfoo"]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let before = snapshot(dir);
    refused(repair(dir, IN, "out", None), &["external-library"]);
    assert_unchanged(dir, &before);
    // A file name that is not the repaired wheel's.
    dirty_wheel(dir, ANSWER_C, &[]);
    let before = snapshot(dir);
    refused(
        repair(dir, IN, "out/x.whl", None),
        &["must be named demo-1.0-py3-none-"],
    );
    refused(
        repair(dir, IN, "out", Some("manylinux_9_99")),
        &["unknown platform tag"],
    );
    assert_unchanged(dir, &before);
}

#[test]
fn plat_older_than_the_symbols_allow_is_refused() {
    let d = tempdir();
    let dir = d.path();
    // getrandom is GLIBC_2.25.
    let src = "#include <sys/random.h>\nlong r(char *b) { return getrandom(b, 4, 0); }\n";
    dirty_wheel(dir, src, &[]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let before = snapshot(dir);
    refused(
        repair(dir, IN, "out", Some("manylinux2014")),
        &[
            "cannot be repaired to platform tag manylinux_2_17_x86_64",
            "symbol-version",
        ],
    );
    assert_unchanged(dir, &before);
    // A less compatible tag than the proven one is fine.
    let r = repair(dir, IN, "out", Some("manylinux_2_39_x86_64")).unwrap();
    assert_eq!(r["platform_tags"]["after"][0], "manylinux_2_39_x86_64");
    assert!(dir
        .join("out/demo-1.0-py3-none-manylinux_2_39_x86_64.whl")
        .exists());
}

#[test]
fn a_bad_license_expression_is_reported_not_changed() {
    let d = tempdir();
    let dir = d.path();
    let di = "demo-1.0.dist-info";
    let metadata = format!(
        "{}License-Expression: apache-2.0 OR mti\n",
        metadata_text("demo", "1.0")
    );
    let files = vec![
        ("demo/__init__.py".to_string(), Vec::new()),
        (format!("{di}/METADATA"), metadata.into_bytes()),
        (
            format!("{di}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_vec(),
        ),
    ];
    wheel_zip(&dir.join(IN), di, &files, &[]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let r = wheel_repair::repair(&dir.join(IN), &dir.join("out"), None).unwrap();
    let human = r.to_human();
    assert!(human.contains("nothing to repair"), "{human}");
    assert!(
        human.contains("warning [license-expression-invalid]"),
        "{human}"
    );
    let j: Value = serde_json::from_str(&r.to_json()).unwrap();
    let f = &j["findings"][0];
    assert_eq!(f["code"], "license-expression-invalid");
    assert_eq!(f["file"], format!("{di}/METADATA"));
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("did you mean \"MIT\""),
        "{f}"
    );
    // The wheel is copied byte for byte: METADATA is the author's.
    assert_eq!(
        std::fs::read(dir.join(IN)).unwrap(),
        std::fs::read(dir.join("out").join(IN)).unwrap()
    );
}
