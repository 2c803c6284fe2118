//! Opening refuses wheels whose member names pip refuses or would
//! mishandle, whatever else the wheel holds: every reader (check, inspect,
//! repair) opens wheels through here.

use std::path::Path;
use test_support::*;
use wheel_read::{OpenError, WheelReader};

/// Opening `whl` fails on its member names, with `needle` in the message.
#[track_caller]
fn refused(whl: &Path, needle: &str) {
    match WheelReader::open(whl) {
        Err(e @ OpenError::BadNames(_)) => {
            let e = e.to_string();
            assert!(e.contains(needle), "{needle:?} not in: {e}");
        }
        Err(e) => panic!("{}: refused for another reason: {e}", whl.display()),
        Ok(_) => panic!("{}: opened", whl.display()),
    }
}

#[test]
fn member_names_pip_refuses_are_refused() {
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
        let whl = dir.join(format!("w{i}-demo-1.0-py3-none-any.whl"));
        crafted_wheel(
            &whl,
            "demo",
            "1.0",
            &[("demo/ok.py", b"x = 1\n"), (bad, b"evil")],
            &[],
        );
        refused(&whl, "invalid member name");
    }
}

/// A [`crafted_wheel`] of `members` and `symlinks` is refused with
/// `needle`.
#[track_caller]
fn crafted_is_refused(members: &[(&str, &[u8])], symlinks: &[(&str, &str)], needle: &str) {
    let d = tempdir();
    let whl = d.path().join("demo-1.0-py3-none-any.whl");
    crafted_wheel(&whl, "demo", "1.0", members, symlinks);
    refused(&whl, needle);
}

#[test]
fn file_directory_collisions_are_refused() {
    crafted_is_refused(
        &[("demo/a", b"1"), ("demo/a/b.py", b"2")],
        &[],
        "NotADirectoryError",
    );
}

#[test]
fn duplicate_members_are_refused() {
    let d = tempdir();
    let whl = d.path().join("demo-1.0-py3-none-any.whl");
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
    refused(&whl, "appears twice");
}

#[test]
fn symlink_members_are_refused() {
    crafted_is_refused(
        &[("demo/a.py", b"1")],
        &[("demo/l", "/etc/passwd")],
        "symbolic link",
    );
}
