//! `build` end to end on small projects: member order and RECORD,
//! reproducibility, modes, `Root-Is-Purelib`, compression levels, and no
//! output after any refused input.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use wheel_writer::{build, Manifest, Options};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let f = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        f.file("a/__init__.py", "x = 1\n");
        f.file("a/b.py", "y = 2\n");
        f.file("LICENSE", "license\n");
        f
    }
    fn p(&self, rel: &str) -> String {
        self.dir.path().join(rel).to_str().unwrap().to_string()
    }
    fn file(&self, rel: &str, text: &str) {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    fn manifest(&self, edit: impl FnOnce(&mut serde_json::Value)) -> Manifest {
        let mut v = serde_json::json!({
            "distribution": "demo-pkg", "version": "1.0", "tags": ["py3-none-any"],
            "metadata": {"license_files": [{"path": "LICENSE", "src": self.p("LICENSE")}]},
            "files": [
                {"path": "a/b.py", "src": self.p("a/b.py")},
                {"path": "a/__init__.py", "src": self.p("a/__init__.py")}
            ]
        });
        edit(&mut v);
        Manifest::from_json(&v.to_string()).unwrap()
    }
    fn out(&self) -> PathBuf {
        let d = self.dir.path().join("out");
        std::fs::create_dir_all(&d).unwrap();
        d.join("demo_pkg-1.0-py3-none-any.whl")
    }
    /// Builds and expects an error containing `want`; no output left.
    fn fails(&self, m: &Manifest, want: &str) {
        let out = self.out();
        let e = format!("{:#}", build(m, &out, &Options::default()).unwrap_err());
        assert!(e.contains(want), "expected {want:?} in: {e}");
        assert_eq!(
            std::fs::read_dir(out.parent().unwrap()).unwrap().count(),
            0,
            "output left behind"
        );
    }
}

fn entries(whl: &Path) -> Vec<String> {
    let z = zip::ZipArchive::new(File::open(whl).unwrap()).unwrap();
    z.file_names().map(String::from).collect::<Vec<_>>()
}

fn read(whl: &Path, name: &str) -> String {
    let mut z = zip::ZipArchive::new(File::open(whl).unwrap()).unwrap();
    let mut s = String::new();
    z.by_name(name).unwrap().read_to_string(&mut s).unwrap();
    s
}

#[test]
fn order_and_record() {
    let f = Fixture::new();
    let out = f.out();
    build(&f.manifest(|_| {}), &out, &Options::default()).unwrap();
    let mut names = entries(&out);
    // zip's file_names() is unordered; order is checked via the raw bytes.
    names.sort();
    let raw = std::fs::read(&out).unwrap();
    let pos = |n: &str| {
        raw.windows(n.len())
            .position(|w| w == n.as_bytes())
            .unwrap()
    };
    let order = [
        "a/__init__.py",
        "a/b.py",
        "demo_pkg-1.0.dist-info/METADATA",
        "demo_pkg-1.0.dist-info/WHEEL",
        "demo_pkg-1.0.dist-info/licenses/LICENSE",
        "demo_pkg-1.0.dist-info/RECORD",
    ];
    assert_eq!(names.len(), order.len());
    for w in order.windows(2) {
        assert!(pos(w[0]) < pos(w[1]), "{} not before {}", w[0], w[1]);
    }
    let record = read(&out, "demo_pkg-1.0.dist-info/RECORD");
    // sha256("y = 2\n"), computed independently with sha256sum.
    assert!(
        record.contains("a/b.py,sha256=9GmEJ2PbOYEHB2T5aLvHecsHefMm44a5m740MfjzDEk,6\n"),
        "{record}"
    );
    assert!(
        record.ends_with("demo_pkg-1.0.dist-info/RECORD,,\n"),
        "{record}"
    );
    assert_eq!(record.lines().count(), 6);
    let wheel = read(&out, "demo_pkg-1.0.dist-info/WHEEL");
    assert!(wheel.contains("Root-Is-Purelib: true\n"), "{wheel}");
}

#[test]
fn reproducible_across_source_locations() {
    let a = Fixture::new();
    let b = Fixture::new();
    let (oa, ob) = (a.out(), b.out());
    build(&a.manifest(|_| {}), &oa, &Options::default()).unwrap();
    build(
        &b.manifest(|_| {}),
        &ob,
        &Options {
            jobs: 1,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(std::fs::read(&oa).unwrap(), std::fs::read(&ob).unwrap());
    let opts = Options {
        source_date_epoch: Some(1_700_000_000),
        ..Options::default()
    };
    build(&b.manifest(|_| {}), &ob, &opts).unwrap();
    assert_ne!(std::fs::read(&oa).unwrap(), std::fs::read(&ob).unwrap());
}

#[test]
fn failed_build_removes_an_old_wheel() {
    let f = Fixture::new();
    let out = f.out();
    build(&f.manifest(|_| {}), &out, &Options::default()).unwrap();
    assert!(out.is_file());
    f.fails(
        &f.manifest(|v| v["files"][0]["src"] = f.p("gone.py").into()),
        "gone.py",
    );
}

#[test]
fn output_name_must_match() {
    let f = Fixture::new();
    let bad = f.dir.path().join("demo-pkg-1.0-py3-none-any.whl");
    let e = build(&f.manifest(|_| {}), &bad, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("it must be \"demo_pkg-1.0-py3-none-any.whl\""),
        "{e}"
    );
    assert!(!bad.exists());
}

#[test]
fn bad_inputs_leave_no_output() {
    let f = Fixture::new();
    let m = f.manifest(|v| v["files"][0]["src"] = f.p("missing.py").into());
    f.fails(&m, "missing.py");
    let m = f.manifest(|v| v["metadata"]["license_files"][0]["src"] = f.p("NOPE").into());
    f.fails(&m, "license file");
    let m = f.manifest(|v| v["files"][1]["path"] = "a/b.py".into());
    f.fails(&m, "appears twice");
    for (p, why) in [
        ("../x.py", "'..'"),
        ("/x.py", "absolute"),
        ("a//x.py", "empty component"),
        ("a/./x.py", "'.' component"),
        ("a\\x.py", "'\\'"),
        (
            "other-1.0.dist-info/METADATA",
            "not this wheel's .dist-info",
        ),
        ("demo_pkg-1.0.dist-info/WHEEL", "appears twice"),
        ("demo_pkg-1.0.dist-info/licenses/X", "license_files"),
        ("other-1.0.data/purelib/x.py", "not this wheel's .data"),
        ("demo_pkg-1.0.data/nonsense/x.py", "go under one of"),
    ] {
        let m = f.manifest(|v| v["files"][0]["path"] = p.into());
        f.fails(&m, why);
    }
    let m = f.manifest(|v| v["version"] = "1.0.0-rc1".into());
    f.fails(&m, "use \"1.0.0rc1\"");
    let m =
        f.manifest(|v| v["metadata"]["requires_dist"] = serde_json::json!(["x; extra == 'gpu'"]));
    f.fails(&m, "not in metadata.provides_extra");
    let m = f.manifest(|v| v["metadata"]["requires_python"] = ">=3.10,".into());
    f.fails(&m, "requires_python");
    let m = f.manifest(|v| {
        v["metadata"]["license_expression"] = "MIT".into();
        v["metadata"]["classifiers"] =
            serde_json::json!(["License :: OSI Approved :: MIT License"]);
    });
    f.fails(&m, "PEP 639 replaces license classifiers");
    let m = f.manifest(|v| v["metadata"]["summary"] = "two\nlines".into());
    f.fails(&m, "single line");
    let m = f.manifest(|v| v["metadata"]["provides_extra"] = serde_json::json!(["Test_Extra"]));
    f.fails(&m, "use \"test-extra\"");
}

#[test]
fn purelib_detection() {
    let f = Fixture::new();
    // A real ELF file without a .so name still counts as platform code.
    std::fs::copy("/bin/true", f.dir.path().join("tool")).unwrap();
    let with_elf = |v: &mut serde_json::Value| {
        v["files"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"path": "a/tool", "src": f.p("tool")}));
    };
    let out = f.out();
    build(&f.manifest(with_elf), &out, &Options::default()).unwrap();
    assert!(read(&out, "demo_pkg-1.0.dist-info/WHEEL").contains("Root-Is-Purelib: false\n"));
    let mode = zip::ZipArchive::new(File::open(&out).unwrap())
        .unwrap()
        .by_name("a/tool")
        .unwrap()
        .unix_mode();
    assert_eq!(mode, Some(0o100755));
    std::fs::remove_file(&out).unwrap();
    let m = f.manifest(|v| {
        with_elf(v);
        v["root_is_purelib"] = true.into();
    });
    f.fails(&m, "is platform code");
    let m = f.manifest(|v| {
        v["root_is_purelib"] = true.into();
        v["tags"] = serde_json::json!(["py3-none-linux_x86_64"]);
    });
    let out = f
        .dir
        .path()
        .join("out/demo_pkg-1.0-py3-none-linux_x86_64.whl");
    let e = build(&m, &out, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("platform-specific"), "{e}");
}

#[test]
fn modes_follow_content_not_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    std::fs::copy("/bin/true", f.dir.path().join("tool")).unwrap();
    f.file("run.sh", "#!/bin/sh\nexit 0\n");
    f.file("data.txt", "not a script\n");
    // A 64-bit little-endian ELF header of type ET_REL (an object file).
    let mut rel = b"\x7fELF\x02\x01\x01".to_vec();
    rel.resize(64, 0);
    rel[16] = 1;
    std::fs::write(f.dir.path().join("x.o"), &rel).unwrap();
    let srcs = [
        "a/__init__.py",
        "a/b.py",
        "tool",
        "run.sh",
        "data.txt",
        "x.o",
        "LICENSE",
    ];
    let m = f.manifest(|v| {
        let files = v["files"].as_array_mut().unwrap();
        for (path, src) in [
            ("a/tool", "tool"),
            ("a/run.sh", "run.sh"),
            ("a/data.txt", "data.txt"),
            ("a/x.o", "x.o"),
        ] {
            files.push(serde_json::json!({"path": path, "src": f.p(src)}));
        }
    });
    let out = f.out();
    let mut wheels = Vec::new();
    // What remote execution does to inputs (all executable), and the
    // opposite: the wheel must not change.
    for bits in [0o755, 0o644] {
        for s in srcs {
            std::fs::set_permissions(f.dir.path().join(s), std::fs::Permissions::from_mode(bits))
                .unwrap();
        }
        build(&m, &out, &Options::default()).unwrap();
        wheels.push(std::fs::read(&out).unwrap());
    }
    assert!(
        wheels[0] == wheels[1],
        "the wheel's bytes depend on the inputs' executable bits"
    );
    let mut z = zip::ZipArchive::new(File::open(&out).unwrap()).unwrap();
    for (name, mode) in [
        ("a/tool", 0o100755),
        ("a/run.sh", 0o100755),
        ("a/b.py", 0o100644),
        ("a/data.txt", 0o100644),
        ("a/x.o", 0o100644),
        ("demo_pkg-1.0.dist-info/licenses/LICENSE", 0o100644),
    ] {
        assert_eq!(z.by_name(name).unwrap().unix_mode(), Some(mode), "{name}");
    }
}

#[test]
fn compression_levels() {
    let f = Fixture::new();
    let big = "some text that compresses well\n".repeat(10_000);
    f.file("a/big.txt", &big);
    let m = f.manifest(|v| {
        v["files"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"path": "a/big.txt", "src": f.p("a/big.txt")}))
    });
    let out = f.out();
    build(
        &m,
        &out,
        &Options {
            compression_level: 0,
            ..Options::default()
        },
    )
    .unwrap();
    let stored = std::fs::metadata(&out).unwrap().len();
    assert!(stored > big.len() as u64);
    build(
        &m,
        &out,
        &Options {
            compression_level: 9,
            ..Options::default()
        },
    )
    .unwrap();
    let deflated = std::fs::metadata(&out).unwrap().len();
    assert!(deflated < big.len() as u64 / 20, "{deflated}");
    assert_eq!(read(&out, "a/big.txt"), big);
    let e = build(
        &m,
        &out,
        &Options {
            compression_level: 10,
            ..Options::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("out of range"), "{e}");
}

/// Same manifest, any `jobs`, any run: the same bytes. Members of at least
/// 4 MB are compressed in parallel chunks.
#[test]
fn output_does_not_depend_on_jobs() {
    let f = Fixture::new();
    let mut rng = test_support::Rng(0x9e37_79b9_7f4a_7c15);
    let mut files = Vec::new();
    for i in 0..2 {
        let len = (4 << 20) + rng.below(2 << 20) as usize;
        let name = format!("demo/blob{i}.bin");
        std::fs::create_dir_all(f.dir.path().join("src/demo")).unwrap();
        let src = f.dir.path().join("src").join(&name);
        std::fs::write(&src, test_support::payload(&mut rng, len)).unwrap();
        files.push(serde_json::json!({"path": name, "src": src}));
    }
    let m = serde_json::json!({
        "distribution": "demo", "version": "1.0", "tags": ["py3-none-any"],
        "files": files,
    });
    let m = Manifest::from_json(&m.to_string()).unwrap();
    let mut sums = Vec::new();
    for jobs in [1, 2, 3, 4, 4] {
        let out = f.dir.path().join(format!("out{jobs}"));
        std::fs::create_dir_all(&out).unwrap();
        let out = out.join("demo-1.0-py3-none-any.whl");
        let opts = Options {
            jobs,
            ..Options::default()
        };
        build(&m, &out, &opts).unwrap();
        sums.push((jobs, test_support::sha256_file(&out)));
    }
    assert!(
        sums.iter().all(|(_, s)| *s == sums[0].1),
        "sha256 by jobs: {sums:?}"
    );
}
