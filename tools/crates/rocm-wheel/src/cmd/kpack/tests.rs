//! The command line the Bazel rules use, parsed and run in-process.
use super::*;
use crate::cmd::parse_args;
use kpack::{Archive, Marker};

fn rw(argv: &[&str]) -> Result<()> {
    run(parse_args::<Args>("kpack", argv)?)
}

#[test]
fn marker_outputs_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    rw(&[
        "marker",
        "--kernel-name",
        "pkg/a.hip",
        "--search-path",
        ".kpack/@GFXARCH@.kpack",
        "--output",
        &p("m"),
        "--wrapper-output",
        &p("w"),
    ])
    .unwrap();
    let (m, _) = Marker::parse(&std::fs::read(p("m")).unwrap()).unwrap();
    assert_eq!(m.kernel_name, "pkg/a.hip");
    assert_eq!(&std::fs::read(p("w")).unwrap()[..4], b"HIPK");
    let err = rw(&[
        "marker",
        "--kernel-name",
        "k",
        "--search-path",
        "x.kpack",
        "--output",
        &p("m2"),
    ])
    .unwrap_err();
    assert!(err.to_string().contains("@GFXARCH@"), "{err}");
    assert!(!dir.path().join("m2").exists());
    // An output that cannot be written leaves the other unwritten too,
    // and one file given as both is refused.
    let both = |output: &str, wrapper: &str| {
        rw(&[
            "marker",
            "--kernel-name",
            "k",
            "--search-path",
            ".kpack/@GFXARCH@.kpack",
            "--output",
            &p(output),
            "--wrapper-output",
            &p(wrapper),
        ])
        .unwrap_err()
        .to_string()
    };
    let err = both("missing/m3", "w3");
    assert!(err.contains("temporary file"), "{err}");
    assert!(!dir.path().join("w3").exists());
    assert!(both("m4", "m4").contains("give two files"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n == "w3" || n == "m4")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn archive_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    std::fs::write(p("a.co"), b"code object").unwrap();
    let kernel = format!("pkg/a.hip#0@gfx1201={}", p("a.co"));
    rw(&[
        "archive",
        "--group",
        "pkg",
        "--family",
        "gfx1201",
        "--target",
        "gfx1201",
        "--kernel",
        &kernel,
        "--output",
        &p("x.kpack"),
    ])
    .unwrap();
    let mut ar = Archive::open(dir.path().join("x.kpack").as_path()).unwrap();
    assert_eq!(ar.kernel("pkg/a.hip#0", "gfx1201").unwrap(), b"code object");
    let bad = rw(&[
        "archive",
        "--group",
        "g",
        "--family",
        "f",
        "--target",
        "gfx1201",
        "--kernel",
        "nofile",
        "--output",
        &p("y"),
    ]);
    assert!(bad.unwrap_err().to_string().contains("KEY@TARGET=FILE"));
    rw(&["list", &p("x.kpack")]).unwrap();
}
