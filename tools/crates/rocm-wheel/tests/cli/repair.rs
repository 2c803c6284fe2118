//! `rocm-wheel repair`: the command line over wheel-repair, whose tests
//! (tools/crates/wheel-repair/tests) cover what is kept and dropped, the
//! tag and the refusals. Here: `--json` and the human report, exit codes,
//! `-o` as a directory or a file, nothing left behind on error, and the
//! binary's memory on zip bombs.

use crate::hardening::{fixture, rw_rss, WHL};
use crate::*;
use serde_json::Value;

const IN: &str = "demo-1.0-py3-none-any.whl";

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn repair_writes_into_a_directory_and_reports() {
    let d = tempdir();
    let dir = d.path();
    dirty_wheel(dir, ANSWER_C, &[]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let r = json(&rw(dir, &["repair", IN, "-o", "out", "--json"]).success());
    assert_eq!(r["changed"], true);
    let tag = r["proven_platform_tag"].as_str().unwrap();
    // The output as given: the -o directory joined with the wheel's name.
    let output = format!("out/demo-1.0-py3-none-{tag}.whl");
    assert_eq!(r["output"], output.as_str());
    assert!(dir.join(&output).is_file());
    // Again on the output, into a file name: the human report.
    std::fs::create_dir(dir.join("twice")).unwrap();
    let again = format!("twice/demo-1.0-py3-none-{tag}.whl");
    let out = rw(dir, &["repair", &output, "-o", &again]).success();
    assert!(out.stdout.contains("nothing to repair"), "{}", out.stdout);
    assert!(dir.join(&again).is_file());
}

#[test]
fn refusals_exit_1_and_leave_no_output() {
    let d = tempdir();
    let dir = d.path();
    std::fs::create_dir(dir.join("out")).unwrap();
    // A file name that is not the repaired wheel's (what the library
    // refuses: wheel-repair's tests).
    dirty_wheel(dir, ANSWER_C, &[]);
    let before = snapshot(dir);
    rw(dir, &["repair", IN, "-o", "out/x.whl"]).fails(1, "must be named demo-1.0-py3-none-");
    rw(
        dir,
        &["repair", IN, "-o", "out", "--plat", "manylinux_9_99"],
    )
    .fails(1, "unknown platform tag");
    // Usage errors are clap's.
    rw(dir, &["repair", IN]).fails(2, "--output");
    assert_unchanged(dir, &before);
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
