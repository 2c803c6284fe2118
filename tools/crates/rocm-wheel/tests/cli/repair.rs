//! `rocm-wheel repair` on wheels holding gcc-built shared objects with
//! build-tree search paths: what is kept and dropped, purelib, the tag,
//! the bytes outside the dynamic strings, idempotence and the refusals.

use crate::hardening::{fixture, rw_rss, WHL};
use crate::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const IN: &str = "demo-1.0-py3-none-any.whl";

/// A shared object built by gcc from `src` with the search path `rpath`
/// (DT_RUNPATH) and `extra` linker arguments.
fn so(dir: &Path, name: &str, src: &str, rpath: &str, extra: &[&str]) -> Vec<u8> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    run_stdout(
        Command::new("gcc")
            .current_dir(dir)
            .args(["-shared", "-fPIC", "-O1", "-Wl,--enable-new-dtags"])
            .arg(format!("-Wl,-rpath,{rpath}"))
            .arg("-o")
            .arg(&out)
            .arg(&c)
            .args(extra),
    );
    std::fs::read(out).unwrap()
}

const DIRTY: &str = "$ORIGIN:$ORIGIN/_ext.so.runfiles/__main__/_solib_k8/_U_S_Srocm:\
/usr/local/lib/python3.12/dist-packages/_rocm_sdk_core/lib:$ORIGIN/../_rocm_sdk_core/lib:\
$ORIGIN/../../_rocm_sdk_core/lib:/opt/rocm-7.2.0/lib:/opt/rocm/lib:$ORIGIN/missing:$ORIGIN";
const CLEAN: &str = "$ORIGIN:$ORIGIN/../_rocm_sdk_core/lib:/opt/rocm/lib";

const ANSWER: &str = "int answer(void) { return 42; }\n";

/// A pure-tagged, purelib wheel (`crafted_wheel`) with `demo/_ext.so`,
/// built from `src` with the search path [`DIRTY`]; returns the `.so`.
fn dirty_wheel(dir: &Path, src: &str, extra: &[&str]) -> Vec<u8> {
    let ext = so(dir, "_ext.so", src, DIRTY, extra);
    crafted_wheel(
        &dir.join(IN),
        "demo",
        "1.0",
        &[("demo/__init__.py", &b""[..]), ("demo/_ext.so", &ext)],
        &[],
    );
    ext
}

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap()
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
    let ext = dirty_wheel(dir, ANSWER, &[]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = rw(dir, &["repair", IN, "-o", "out", "--json"]).success();
    let r = json(&out);
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
    assert_eq!(r["output"], format!("out/demo-1.0-py3-none-{tag}.whl"));
    // The new RUNPATH, read by LLVM.
    std::fs::write(dir.join("new.so"), member(&repaired, "demo/_ext.so")).unwrap();
    let dynamic = run_stdout(llvm_cmd("llvm-readelf").arg("-d").arg(dir.join("new.so")));
    assert!(
        dynamic.contains(&format!("Library runpath: [{CLEAN}]")),
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
    // WHEEL, and the checker on the output: no finding about rpaths or purelib.
    let wheel = String::from_utf8(member(repaired, "demo-1.0.dist-info/WHEEL")).unwrap();
    assert!(wheel.contains("Root-Is-Purelib: false\n"), "{wheel}");
    assert!(wheel.contains(&format!("Tag: py3-none-{tag}\n")), "{wheel}");
    let check = rw(dir, &["check", "--json", repaired.to_str().unwrap()]).success();
    let c = json(&check);
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
    dirty_wheel(dir, ANSWER, &[]);
    std::fs::create_dir_all(dir.join("once")).unwrap();
    std::fs::create_dir_all(dir.join("twice")).unwrap();
    let r = json(&rw(dir, &["repair", IN, "-o", "once", "--json"]).success());
    let name = Path::new(r["output"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let once = dir.join("once").join(&name);
    let out = rw(dir, &["repair", once.to_str().unwrap(), "-o", "twice"]).success();
    assert!(out.stdout.contains("nothing to repair"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(&once).unwrap(),
        std::fs::read(dir.join("twice").join(&name)).unwrap()
    );
    let again = json(
        &rw(
            dir,
            &["repair", once.to_str().unwrap(), "-o", "twice", "--json"],
        )
        .success(),
    );
    assert_eq!(again["changed"], false);
    assert_eq!(again["elfs"].as_array().unwrap().len(), 0);
}

#[test]
fn refusals_leave_no_output() {
    let d = tempdir();
    let dir = d.path();
    // A library the wheel does not bundle and no policy allows.
    so(
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
    rw(dir, &["repair", IN, "-o", "out"]).fails(1, "external-library");
    assert_unchanged(dir, &before);
    // A file name that is not the repaired wheel's.
    dirty_wheel(dir, ANSWER, &[]);
    let before = snapshot(dir);
    rw(dir, &["repair", IN, "-o", "out/x.whl"]).fails(1, "must be named demo-1.0-py3-none-");
    rw(
        dir,
        &["repair", IN, "-o", "out", "--plat", "manylinux_9_99"],
    )
    .fails(1, "unknown platform tag");
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
    rw(dir, &["repair", IN, "-o", "out", "--plat", "manylinux2014"])
        .fails(
            1,
            "cannot be repaired to platform tag manylinux_2_17_x86_64",
        )
        .fails(1, "symbol-version");
    assert_unchanged(dir, &before);
    // A less compatible tag than the proven one is fine.
    let r = json(
        &rw(
            dir,
            &[
                "repair",
                IN,
                "-o",
                "out",
                "--plat",
                "manylinux_2_39_x86_64",
                "--json",
            ],
        )
        .success(),
    );
    assert_eq!(r["platform_tags"]["after"][0], "manylinux_2_39_x86_64");
    assert!(dir
        .join("out/demo-1.0-py3-none-manylinux_2_39_x86_64.whl")
        .exists());
}

/// The hardening corpus's zip bombs: a member whose ZIP64 size lies, and a
/// 256 MiB ELF member in a small wheel. repair reads them like `check`
/// (a clean error, or a result) within `check`'s memory bound, and leaves
/// nothing behind on error.
#[test]
fn zip_bombs_give_clean_errors_within_the_memory_bound() {
    let d = tempdir();
    let dir = d.path();
    std::fs::create_dir(dir.join("out")).unwrap();
    let tiny = fixture("tiny-none.so");
    bomb_wheel(&dir.join(WHL), &tiny, 1 << 20, Some(1 << 40));
    let before = snapshot(dir);
    let (code, err, rss) = rw_rss(dir, &["repair", WHL, "-o", "out"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("shorter than the 1099511627776 bytes"),
        "{err}"
    );
    assert!(rss < 64, "peak RSS {rss} MiB");
    assert_unchanged(dir, &before);
    bomb_wheel(&dir.join(WHL), &tiny, 256 << 20, None);
    let (code, err, rss) = rw_rss(dir, &["repair", WHL, "-o", "out"]);
    assert!(
        !err.contains("memory allocation") && !err.contains("panicked"),
        "{err}"
    );
    assert!(code == Some(0) || code == Some(1), "{code:?} {err}");
    eprintln!("repair of a 256 MiB ELF member: exit {code:?}, peak RSS {rss} MiB");
    assert!(rss < 100, "peak RSS {rss} MiB");
}
