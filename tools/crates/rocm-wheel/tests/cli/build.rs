//! `rocm-wheel build --manifest M --output O --compression-level N`, the
//! command line of the `rocm_wheel` rule.

use crate::*;
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;

/// A source tree and a valid manifest for it (paths relative to `dir`,
/// as the rule writes them relative to the execroot).
fn project(dir: &Path) -> Value {
    std::fs::create_dir_all(dir.join("src/demo")).unwrap();
    std::fs::write(dir.join("src/demo/__init__.py"), "VALUE = 1\n").unwrap();
    std::fs::write(dir.join("src/demo/util.py"), "def f():\n    return 2\n").unwrap();
    std::fs::write(dir.join("src/LICENSE"), "Apache-2.0 test copy\n").unwrap();
    json!({
        "distribution": "Demo.Pkg",
        "version": "1.2.0rc1",
        "tags": ["py3-none-any"],
        "metadata": {
            "summary": "CLI test wheel",
            "requires_dist": ["numpy>=1.26"],
            "license_files": [{"path": "LICENSE", "src": "src/LICENSE"}]
        },
        "entry_points": {"console_scripts": {"demo": "demo:main"}},
        "files": [
            {"path": "demo/util.py", "src": "src/demo/util.py"},
            {"path": "demo/__init__.py", "src": "src/demo/__init__.py"}
        ]
    })
}

/// The file name the manifest above implies (normalised name).
const WHEEL: &str = "demo_pkg-1.2.0rc1-py3-none-any.whl";

fn write_manifest(dir: &Path, m: &Value) {
    std::fs::write(dir.join("m.json"), serde_json::to_vec_pretty(m).unwrap()).unwrap();
}

fn build(dir: &Path, output: &str, level: &str) -> Out {
    rw(
        dir,
        &[
            "build",
            "--manifest",
            "m.json",
            "--output",
            output,
            "--compression-level",
            level,
        ],
    )
}

fn members(wheel: &Path) -> Vec<(String, zip::CompressionMethod, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut data = Vec::new();
            f.read_to_end(&mut data).unwrap();
            (f.name().to_string(), f.compression(), data)
        })
        .collect()
}

#[test]
fn writes_the_wheel_the_manifest_names() {
    let d = tempdir();
    let dir = d.path();
    write_manifest(dir, &project(dir));
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = build(dir, &format!("out/{WHEEL}"), "0").success();
    assert!(
        out.stdout.is_empty(),
        "build prints nothing: {}",
        out.stdout
    );
    // Exactly the wheel, under exactly that name; no temporary file left.
    let listing: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(listing, [WHEEL]);
    let wheel = dir.join("out").join(WHEEL);

    let m = members(&wheel);
    let names: Vec<&str> = m.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "demo/__init__.py",
            "demo/util.py",
            "demo_pkg-1.2.0rc1.dist-info/METADATA",
            "demo_pkg-1.2.0rc1.dist-info/WHEEL",
            "demo_pkg-1.2.0rc1.dist-info/entry_points.txt",
            "demo_pkg-1.2.0rc1.dist-info/licenses/LICENSE",
            "demo_pkg-1.2.0rc1.dist-info/RECORD",
        ]
    );
    // --compression-level 0 stores every member.
    for (n, method, _) in &m {
        assert_eq!(*method, zip::CompressionMethod::Stored, "{n}");
    }
    let text =
        |name: &str| String::from_utf8(m.iter().find(|x| x.0 == name).unwrap().2.clone()).unwrap();
    let metadata = text("demo_pkg-1.2.0rc1.dist-info/METADATA");
    for line in [
        "Name: Demo.Pkg",
        "Version: 1.2.0rc1",
        "Requires-Dist: numpy>=1.26",
        "License-File: LICENSE",
    ] {
        assert!(metadata.lines().any(|l| l == line), "{line}:\n{metadata}");
    }
    assert!(text("demo_pkg-1.2.0rc1.dist-info/WHEEL")
        .lines()
        .any(|l| l == "Tag: py3-none-any"));
    assert_eq!(text("demo/util.py"), "def f():\n    return 2\n");

    // The reference unpacker verifies every RECORD hash and size.
    let unpacked = dir.join("unpacked");
    run_stdout(
        std::process::Command::new(venv_bin("wheel"))
            .args(["unpack", "--dest"])
            .arg(&unpacked)
            .arg(&wheel),
    );
    assert_eq!(
        std::fs::read(unpacked.join("demo_pkg-1.2.0rc1/demo/__init__.py")).unwrap(),
        b"VALUE = 1\n"
    );
}

#[test]
fn deflate_levels_and_reproducible_output() {
    let d = tempdir();
    let dir = d.path();
    let mut m = project(dir);
    // Something worth compressing.
    std::fs::write(dir.join("src/demo/big.py"), "x = 1\n".repeat(10_000)).unwrap();
    m["files"]
        .as_array_mut()
        .unwrap()
        .push(json!({"path": "demo/big.py", "src": "src/demo/big.py"}));
    write_manifest(dir, &m);
    build(dir, WHEEL, "9").success();
    let first = std::fs::read(dir.join(WHEEL)).unwrap();
    let big = members(&dir.join(WHEEL))
        .into_iter()
        .find(|x| x.0 == "demo/big.py")
        .unwrap();
    assert_eq!(big.1, zip::CompressionMethod::Deflated);
    assert!(first.len() < 60_000 / 4, "level 9 did not compress");
    // Rebuilding (over the existing wheel) gives the same bytes: Bazel
    // caches depend on it.
    build(dir, WHEEL, "9").success();
    assert_eq!(std::fs::read(dir.join(WHEEL)).unwrap(), first);
    // SOURCE_DATE_EPOCH changes the entries' timestamps, nothing else.
    run_cmd(
        std::process::Command::new(BIN)
            .current_dir(dir)
            .args(["build", "--manifest", "m.json", "--output", WHEEL])
            .args(["--compression-level", "9"])
            .env("SOURCE_DATE_EPOCH", "1700000000"),
    )
    .success();
    let dated = std::fs::read(dir.join(WHEEL)).unwrap();
    assert_ne!(dated, first, "SOURCE_DATE_EPOCH was ignored");
    assert_eq!(dated.len(), first.len());
}

/// One bad manifest: the expected stderr substring, then a mutation of the
/// valid manifest.
type Case = (&'static str, &'static str, fn(&mut Value));

const BAD_MANIFESTS: &[Case] = &[
    (
        "invalid distribution name",
        "invalid distribution name \"-demo\"",
        |m| m["distribution"] = json!("-demo"),
    ),
    (
        "name with a space",
        "invalid distribution name \"demo pkg\"",
        |m| m["distribution"] = json!("demo pkg"),
    ),
    (
        "version not PEP 440",
        "invalid version \"1.0-beta-x\": not a PEP 440 version",
        |m| m["version"] = json!("1.0-beta-x"),
    ),
    (
        "archive path with ..",
        "invalid archive path \"demo/../../evil.py\": it contains a '..' component",
        |m| m["files"][0]["path"] = json!("demo/../../evil.py"),
    ),
    (
        "archive path with a leading /",
        "invalid archive path \"/etc/evil.py\": it is absolute",
        |m| m["files"][0]["path"] = json!("/etc/evil.py"),
    ),
    (
        "same archive path twice",
        "archive path \"demo/__init__.py\" appears twice",
        |m| m["files"][0]["path"] = json!("demo/__init__.py"),
    ),
    (
        "source file missing",
        "source file \"src/demo/missing.py\" (for \"demo/util.py\") does not exist",
        |m| m["files"][0]["src"] = json!("src/demo/missing.py"),
    ),
    (
        "license file missing",
        "license file \"src/NOTICE\" is missing",
        |m| m["metadata"]["license_files"][0]["src"] = json!("src/NOTICE"),
    ),
    (
        "license expression not in canonical form",
        "metadata.license_expression \"apache-2.0 or mit\" is valid but not in canonical form: write \"Apache-2.0 OR MIT\"",
        |m| m["metadata"]["license_expression"] = json!("apache-2.0 or mit"),
    ),
    (
        "unknown license id",
        "unknown license id \"Apache-2\": did you mean \"Apache-2.0\"?",
        |m| m["metadata"]["license_expression"] = json!("Apache-2"),
    ),
    (
        "unknown manifest key (a Starlark typo)",
        "unknown field `entrypoints`",
        |m| m["entrypoints"] = json!({}),
    ),
    ("no tags", "\"tags\" is empty", |m| m["tags"] = json!([])),
];

#[test]
fn bad_manifests_fail_without_output() {
    for (what, needle, edit) in BAD_MANIFESTS {
        let d = tempdir();
        let dir = d.path();
        let mut m = project(dir);
        edit(&mut m);
        write_manifest(dir, &m);
        let before = snapshot(dir);
        let name = match m["distribution"].as_str() {
            // The output name only matters once the manifest is valid.
            Some("Demo.Pkg") if m["version"] == "1.2.0rc1" => WHEEL.to_string(),
            _ => "x-1.0-py3-none-any.whl".to_string(),
        };
        let out = build(dir, &name, "6");
        eprintln!("case: {what}");
        out.fails(1, needle);
        assert_unchanged(dir, &before);
    }
}

#[test]
fn malformed_and_missing_manifests() {
    let d = tempdir();
    let dir = d.path();
    project(dir);
    let valid = serde_json::to_string(&project(dir)).unwrap();
    // Cut in the middle: what a half-written file looks like.
    std::fs::write(dir.join("m.json"), &valid[..valid.len() / 2]).unwrap();
    let before = snapshot(dir);
    build(dir, WHEEL, "6").fails(1, "invalid wheel manifest");
    assert_unchanged(dir, &before);

    std::fs::write(dir.join("m.json"), b"\xff\xfe not json").unwrap();
    let before = snapshot(dir);
    build(dir, WHEEL, "6").fails(1, "m.json");
    assert_unchanged(dir, &before);

    std::fs::remove_file(dir.join("m.json")).unwrap();
    let before = snapshot(dir);
    build(dir, WHEEL, "6").fails(1, "cannot read the manifest m.json");
    assert_unchanged(dir, &before);
}

#[test]
fn output_name_must_match_the_manifest() {
    let d = tempdir();
    let dir = d.path();
    write_manifest(dir, &project(dir));
    let before = snapshot(dir);
    // The unnormalised name is what a hand-written rule would get wrong.
    build(dir, "Demo.Pkg-1.2.0rc1-py3-none-any.whl", "6")
        .fails(1, &format!("it must be \"{WHEEL}\""));
    assert_unchanged(dir, &before);
    // An output directory that does not exist.
    build(dir, &format!("nowhere/{WHEEL}"), "6").fails(1, "cannot create a temporary file in");
    assert_unchanged(dir, &before);
}

#[test]
fn unwritable_output_directory() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempdir();
    let dir = d.path();
    write_manifest(dir, &project(dir));
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(dir);
    let out = run_without_dac_override(
        dir,
        &ro,
        &[
            "build",
            "--manifest",
            "m.json",
            "--output",
            &format!("ro/{WHEEL}"),
        ],
    );
    let after = snapshot(dir);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    out.fails(1, "cannot create a temporary file in ro");
    assert_eq!(after, before);
}

#[test]
fn failed_build_removes_a_stale_wheel() {
    // A wheel from an earlier run must not pass for the result of a failed
    // one; the sources stay as they were.
    let d = tempdir();
    let dir = d.path();
    write_manifest(dir, &project(dir));
    build(dir, WHEEL, "6").success();
    std::fs::remove_file(dir.join("src/demo/util.py")).unwrap();
    let mut before = snapshot(dir);
    build(dir, WHEEL, "6").fails(1, "does not exist");
    before.remove(Path::new(WHEEL)).unwrap();
    assert_unchanged(dir, &before);
}

#[test]
fn usage_errors_exit_2() {
    let d = tempdir();
    let dir = d.path();
    write_manifest(dir, &project(dir));
    let before = snapshot(dir);
    for (args, needle) in [
        (
            &[
                "build",
                "--manifest",
                "m.json",
                "--output",
                WHEEL,
                "--compression-level",
                "10",
            ][..],
            "10 is not in 0..=9",
        ),
        (&["build", "--output", WHEEL][..], "--manifest"),
        (&["build", "--manifest", "m.json"][..], "--output"),
        (
            &[
                "build",
                "--manifest",
                "m.json",
                "--output",
                WHEEL,
                "--jobs",
                "0",
            ][..],
            "--jobs",
        ),
    ] {
        rw(dir, args).fails(2, needle);
        assert_unchanged(dir, &before);
    }
    // A bad SOURCE_DATE_EPOCH is refused, not silently ignored.
    run_cmd(
        std::process::Command::new(BIN)
            .current_dir(dir)
            .args(["build", "--manifest", "m.json", "--output", WHEEL])
            .env("SOURCE_DATE_EPOCH", "yesterday"),
    )
    .fails(1, "SOURCE_DATE_EPOCH=\"yesterday\" is not");
    assert_unchanged(dir, &before);
}

/// The paths of the files `pid` has open.
fn open_files(pid: u32) -> Vec<std::path::PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .collect()
}

/// A run killed while it writes its output (SIGKILL: no destructor, no
/// handler; SIGTERM: the default action) leaves nothing in the output
/// directory: the output is an unnamed file until it is complete. The
/// wheel holds an 8 GiB sparse file (free to make, seconds to deflate),
/// so the run is killed mid-write, as soon as its output is open.
#[test]
fn a_killed_build_leaves_nothing_behind() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let d = tempdir();
    let dir = d.path().canonicalize().unwrap();
    let mut m = project(&dir);
    std::fs::File::create(dir.join("src/demo/big.bin"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    m["files"]
        .as_array_mut()
        .unwrap()
        .push(json!({"path": "demo/big.bin", "src": "src/demo/big.bin"}));
    write_manifest(&dir, &m);
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    for signal in [libc::SIGKILL, libc::SIGTERM] {
        let mut child = std::process::Command::new(BIN)
            .args(["build", "--manifest", "m.json", "--output"])
            .arg(out.join(WHEEL))
            .current_dir(&dir)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !open_files(child.id()).iter().any(|f| f.starts_with(&out)) {
            assert!(child.try_wait().unwrap().is_none(), "the run ended");
            assert!(start.elapsed() < Duration::from_secs(20), "no output open");
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: kill(2) on our own child, which has not been waited for.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert_empty_dir(&out);
    }
}
