//! `rocm-wheel device-extras` and `rocm-wheel index`: a split set (a host
//! wheel and its per-target device wheels, written by the binary) given
//! device extras and served from a file:// index, judged by pip itself
//! (the project venv's pip resolving `--dry-run --report`, no other
//! index); the refusals leave no output.

use crate::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes a py3-none-any wheel of `dist` `version` (one module) with
/// `requires` into `dir` through `rocm-wheel build`; its path.
pub(crate) fn wheel(dir: &Path, dist: &str, version: &str, requires: &[&str]) -> PathBuf {
    let module = dist.replace(['-', '.'], "_").to_lowercase();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{module}.py")), "").unwrap();
    let src = dir.join(format!("{module}.py"));
    let w = wheel_with(
        dir,
        dist,
        version,
        "py3-none-any",
        requires,
        &[(&format!("{module}.py"), &src)],
    );
    std::fs::remove_file(src).unwrap();
    w
}

/// Writes a wheel of `dist` `version` tagged `tag` with `requires` and
/// `files` ((path in the wheel, source file)) into `dir` through `rocm-wheel
/// build`; its path.
pub(crate) fn wheel_with(
    dir: &Path,
    dist: &str,
    version: &str,
    tag: &str,
    requires: &[&str],
    files: &[(&str, &Path)],
) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let module = dist.replace(['-', '.'], "_").to_lowercase();
    let files: Vec<Value> = (files.iter())
        .map(|(p, src)| json!({"path": p, "src": src.display().to_string()}))
        .collect();
    let m = json!({
        "distribution": dist, "version": version, "tags": [tag],
        "metadata": {"requires_dist": requires, "requires_python": ">=3.9"},
        "files": files,
    });
    let manifest = dir.join(format!("{module}.json"));
    std::fs::write(&manifest, m.to_string()).unwrap();
    let name = format!("{module}-{version}-{tag}.whl");
    rw(
        dir,
        &[
            "build",
            "--manifest",
            manifest.to_str().unwrap(),
            "--output",
            name.as_str(),
        ],
    )
    .success();
    std::fs::remove_file(&manifest).unwrap();
    dir.join(name)
}

/// A kpack archive serving `targets` (one dummy kernel each) at `out`.
pub(crate) fn archive(dir: &Path, targets: &[&str], out: &Path) {
    std::fs::write(
        dir.join("k.co"),
        b"a code object, as far as the TOC is concerned",
    )
    .unwrap();
    let mut argv = vec![
        "kpack",
        "archive",
        "--group",
        "demo_plugin",
        "--family",
        targets[0],
    ];
    for t in targets {
        argv.extend(["--target", t]);
    }
    let kernels: Vec<String> = targets
        .iter()
        .map(|t| format!("demo/k.hip#0@{t}=k.co"))
        .collect();
    for k in &kernels {
        argv.extend(["--kernel", k.as_str()]);
    }
    let out = out.display().to_string();
    argv.extend(["--compression", "none", "--output", out.as_str()]);
    rw(dir, &argv).success();
}

/// A device wheel `name` `version` requiring `requires`, one archive per
/// target of `targets` in `demo_plugin/.kpack/`, in `dir`.
pub(crate) fn device_wheel(
    dir: &Path,
    name: &str,
    version: &str,
    requires: &[&str],
    targets: &[&str],
) -> PathBuf {
    // The archives apart: `dir` may be a folder to index (wheels only).
    let scratch = tempdir();
    let mut files = Vec::new();
    for t in targets {
        let a = scratch.path().join(format!("{t}.kpack"));
        archive(scratch.path(), &[t], &a);
        files.push((format!("demo_plugin/.kpack/{t}.kpack"), a));
    }
    let files: Vec<(&str, &Path)> = (files.iter())
        .map(|(p, a)| (p.as_str(), a.as_path()))
        .collect();
    wheel_with(dir, name, version, "py3-none-any", requires, &files)
}

/// A kpack build's set as the rules write it (host `Demo.Plugin`, device
/// wheels for gfx1200 and gfx1201 pinning it and TheRock's SDK device
/// package), the host given its extras, in `dir/dist`; stand-ins for the
/// SDK packages in `dir/sdk`.
fn split_set(dir: &Path) -> PathBuf {
    let (build, dist, sdk) = (dir.join("build"), dir.join("dist"), dir.join("sdk"));
    let host = wheel(&build, "Demo.Plugin", "1.0", &[]);
    let mut devices = Vec::new();
    for gfx in ["gfx1200", "gfx1201"] {
        let pins = [
            "Demo.Plugin==1.0".to_string(),
            format!("rocm-sdk-device-{gfx}==7.2.4"),
        ];
        let pins: Vec<&str> = pins.iter().map(String::as_str).collect();
        devices.push(device_wheel(
            &dist,
            &format!("Demo.Plugin-device-{gfx}"),
            "1.0",
            &pins,
            &[gfx],
        ));
        wheel(&sdk, &format!("rocm-sdk-device-{gfx}"), "7.2.4", &[]);
    }
    let target = dist.join(host.file_name().unwrap());
    let devices: Vec<&Path> = devices.iter().map(PathBuf::as_path).collect();
    let out = device_extras(dir, &host, target.to_str().unwrap(), &devices).success();
    assert!(
        out.stdout
            .contains("extras device-gfx1200, device-gfx1201, device-all"),
        "{}",
        out.stdout
    );
    dist
}

/// What pip would install for `requirement` from the index at `index`
/// alone: sorted (name, version).
pub(crate) fn pip_resolves(dir: &Path, index: &Path, requirement: &str) -> Vec<(String, String)> {
    let report = pip_report(dir, index, requirement);
    let mut got: Vec<(String, String)> = (report["install"].as_array().unwrap().iter())
        .map(|i| {
            let md = &i["metadata"];
            let name = md["name"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .replace(['.', '_'], "-");
            (name, md["version"].as_str().unwrap().to_string())
        })
        .collect();
    got.sort();
    got
}

/// pip's installation report (`--dry-run --report`) for `requirement`
/// from the index at `index` alone.
pub(crate) fn pip_report(dir: &Path, index: &Path, requirement: &str) -> Value {
    let report = dir.join("report.json");
    run(Command::new(venv_bin("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
        ])
        .args(["--disable-pip-version-check", "--no-cache-dir", "--report"])
        .arg(&report)
        .arg("--index-url")
        .arg(format!("file://{}", index.display()))
        .arg(requirement));
    serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap()
}

fn set(items: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<_> = items
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn pip_installs_a_split_set_by_extra_from_the_index() {
    let d = tempdir();
    let dist = split_set(d.path());
    let index = d.path().join("out/index");
    let out = rw(
        d.path(),
        &["index", "-o", "out/index", "dist", "sdk", "dist"],
    )
    .success();
    assert!(
        out.stdout.contains("5 wheels of 5 projects"),
        "{}",
        out.stdout
    );
    // Projects under their PEP 503 names, each wheel beside its page.
    assert_eq!(
        file_names(&index),
        [
            "demo-plugin",
            "demo-plugin-device-gfx1200",
            "demo-plugin-device-gfx1201",
            "index.html",
            "index.json",
            "rocm-sdk-device-gfx1200",
            "rocm-sdk-device-gfx1201"
        ]
    );
    assert_eq!(
        file_names(&index.join("demo-plugin")),
        [
            "demo_plugin-1.0-py3-none-any.whl",
            "demo_plugin-1.0-py3-none-any.whl.metadata",
            "index.html",
            "index.json"
        ]
    );
    let page: Value =
        serde_json::from_slice(&std::fs::read(index.join("demo-plugin/index.json")).unwrap())
            .unwrap();
    let whl = dist.join("demo_plugin-1.0-py3-none-any.whl");
    assert_eq!(page["files"][0]["hashes"]["sha256"], sha256_file(&whl));
    assert_eq!(page["files"][0]["requires-python"], ">=3.9");
    let html = std::fs::read_to_string(index.join("demo-plugin/index.html")).unwrap();
    assert!(html.contains(&format!(
        "#sha256={}\" data-requires-python=\"&gt;=3.9\"",
        sha256_file(&whl)
    )));

    let gfx1201 = set(&[
        ("demo-plugin", "1.0"),
        ("demo-plugin-device-gfx1201", "1.0"),
        ("rocm-sdk-device-gfx1201", "7.2.4"),
    ]);
    assert_eq!(
        pip_resolves(d.path(), &index, "demo-plugin[device-gfx1201]"),
        gfx1201
    );
    // pip normalises names and extras as the index does.
    assert_eq!(
        pip_resolves(d.path(), &index, "DEMO_plugin[Device_GFX1201]"),
        gfx1201
    );
    assert_eq!(
        pip_resolves(d.path(), &index, "demo.plugin"),
        set(&[("demo-plugin", "1.0")])
    );
    let all = pip_resolves(d.path(), &index, "demo-plugin[device-all]");
    assert_eq!(all.len(), 5, "{all:?}");
}

#[test]
fn index_refusals_leave_no_output() {
    let d = tempdir();
    let dist = split_set(d.path());
    let whl = "demo_plugin-1.0-py3-none-any.whl";
    let refused = |argv: &[&str], needle: &str| {
        rw(d.path(), argv).fails(1, needle);
        assert!(!d.path().join("out").exists(), "{argv:?} left output");
    };
    // A file that is not a wheel, by name or by content.
    let other = d.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("README.txt"), "hello").unwrap();
    refused(
        &["index", "-o", "out/i", "dist", "other"],
        "README.txt is not a wheel (*.whl)",
    );
    std::fs::remove_file(other.join("README.txt")).unwrap();
    std::fs::write(other.join("x-1.0-py3-none-any.whl"), "not a zip").unwrap();
    refused(
        &["index", "-o", "out/i", "dist", "other"],
        "x-1.0-py3-none-any.whl is not a valid wheel",
    );
    std::fs::remove_file(other.join("x-1.0-py3-none-any.whl")).unwrap();
    std::fs::create_dir(other.join("sub")).unwrap();
    refused(
        &["index", "-o", "out/i", "other"],
        "sub is not a wheel file",
    );
    std::fs::remove_dir(other.join("sub")).unwrap();
    // Two different files with one name; then one wheel under two names.
    wheel(&other, "Demo.Plugin", "1.0", &["numpy"]);
    refused(
        &["index", "-o", "out/i", "dist", "other"],
        &format!("two different wheels named {whl}"),
    );
    std::fs::remove_file(other.join(whl)).unwrap();
    std::fs::copy(
        dist.join(whl),
        other.join("Demo_Plugin-1.0-py3-none-any.whl"),
    )
    .unwrap();
    refused(
        &["index", "-o", "out/i", "dist", "other"],
        "are the same wheel to pip",
    );
    // An output that holds something.
    std::fs::create_dir_all(d.path().join("busy")).unwrap();
    std::fs::write(d.path().join("busy/keep"), "").unwrap();
    rw(d.path(), &["index", "-o", "busy", "dist"]).fails(1, "busy exists and is not empty");
    assert_eq!(file_names(&d.path().join("busy")), ["keep"]);
    // Nothing half-written stays beside the output either.
    assert!(
        !file_names(d.path())
            .iter()
            .any(|n| n.starts_with(".rocm-wheel-index")),
        "{:?}",
        file_names(d.path())
    );
    // An empty directory (Bazel's tree artifact) is filled.
    std::fs::create_dir_all(d.path().join("empty")).unwrap();
    rw(d.path(), &["index", "-o", "empty", "dist"]).success();
    assert!(d.path().join("empty/demo-plugin/index.html").exists());
}

/// A gzipped tarball `dir/name` holding `<stem>/PKG-INFO`.
fn sdist(dir: &Path, name: &str) -> PathBuf {
    let stem = name.trim_end_matches(".tar.gz");
    let src = dir.join("sdist-src").join(stem);
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("PKG-INFO"), "Metadata-Version: 2.1\nName: rocm\n").unwrap();
    run(Command::new("tar")
        .arg("czf")
        .arg(dir.join(name))
        .arg("-C")
        .arg(dir.join("sdist-src"))
        .arg(stem));
    std::fs::remove_dir_all(dir.join("sdist-src")).unwrap();
    dir.join(name)
}

/// TheRock's `rocm` selector is an sdist: one index serves it beside
/// wheels, listed by its PEP 625 name with its sha256 (pip reads its
/// metadata by building it); names pip cannot read, and files that are
/// no gzip, are refused.
#[test]
fn sdists_beside_wheels() {
    let d = tempdir();
    let p = d.path();
    let dist = p.join("dist");
    wheel(
        &dist,
        "torch",
        "2.9.0",
        &["rocm[libraries]==7.13.0a20261201"],
    );
    let s = sdist(&dist, "rocm-7.13.0a20261201.tar.gz");
    rw(p, &["index", "-o", "out/index", "dist", "dist"]).success();
    let page = std::fs::read_to_string(p.join("out/index/rocm/index.html")).unwrap();
    assert!(
        page.contains(&format!(
            "<a href=\"rocm-7.13.0a20261201.tar.gz#sha256={}\">",
            sha256_file(&s)
        )),
        "{page}"
    );
    let json: Value =
        serde_json::from_slice(&std::fs::read(p.join("out/index/rocm/index.json")).unwrap())
            .unwrap();
    assert_eq!(json["versions"], json!(["7.13.0a20261201"]));
    assert_eq!(
        file_names(&p.join("out/index/rocm")),
        ["index.html", "index.json", "rocm-7.13.0a20261201.tar.gz"]
    );
    for (name, needle) in [
        (
            "rocm-sdk-7.13.0.tar.gz",
            "is not an sdist name pip can read",
        ),
        ("rocm.tar.gz", "is not an sdist name pip can read"),
        ("rocm-7.x.tar.gz", "is not an sdist name pip can read"),
    ] {
        let other = p.join(format!("bad-{name}"));
        std::fs::create_dir_all(&other).unwrap();
        sdist(&other, name);
        rw(p, &["index", "-o", "out/refused", other.to_str().unwrap()]).fails(1, needle);
    }
    let other = p.join("plain");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("rocm-7.13.0.tar.gz"), "not gzip").unwrap();
    rw(p, &["index", "-o", "out/refused", "plain"]).fails(1, "is not a gzip file");
    assert!(!p.join("out/refused").exists());
}

/// `rocm-wheel device-extras HOST -o OUT --device-wheel D...` in `dir`.
pub(crate) fn device_extras(dir: &Path, host: &Path, out: &str, devices: &[&Path]) -> Out {
    let mut argv = vec!["device-extras".to_string(), host.display().to_string()];
    argv.extend(["-o".to_string(), out.to_string()]);
    for d in devices {
        argv.extend(["--device-wheel".to_string(), d.display().to_string()]);
    }
    rw(dir, &argv)
}

/// Long because: one refusal after another, each a few lines.
#[test]
fn device_extras_refusals() {
    let d = tempdir();
    let p = d.path();
    let host = wheel(&p.join("h"), "demo", "1.0", &[]);
    let good = device_wheel(
        &p.join("g"),
        "demo-device-gfx1201",
        "1.0",
        &["demo==1.0"],
        &["gfx1201"],
    );
    let out = "out/demo-1.0-py3-none-any.whl";
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "other-device-gfx1201",
            "1.0",
            "other==1.0",
            "does not require demo==1.0",
        ),
        (
            "demo-device-gfx1200",
            "1.0",
            "demo>=1.0",
            "does not require demo==1.0",
        ),
        (
            "demo-device-gfx1100",
            "1.0",
            "demo==1.0; python_version >= '3'",
            "does not require demo==1.0",
        ),
        (
            "demo-device-gfx1200",
            "0.9",
            "demo==1.0",
            "demo-device-gfx1200 is 0.9, but the host demo is 1.0",
        ),
    ];
    for (i, (dist, version, pin, needle)) in cases.iter().enumerate() {
        let bad = device_wheel(
            &p.join(format!("b{i}")),
            dist,
            version,
            &[*pin],
            &["gfx1200"],
        );
        device_extras(p, &host, out, &[&bad]).fails(1, needle);
    }
    // A wheel pinning the host but holding no device code.
    let empty = wheel(&p.join("e"), "demo-device-gfx1200", "1.0", &["demo==1.0"]);
    device_extras(p, &host, out, &[&empty]).fails(1, "holds no .kpack archive");
    device_extras(p, &host, out, &[&good, &good]).fails(
        1,
        "are both demo-device-gfx1201: give each device wheel of demo once",
    );
    device_extras(p, &host, "out/x.whl", &[&good])
        .fails(1, "the output must be named as the host wheel");
    assert!(!p.join("out").exists());
    // Any name pinning the host is its device wheel (AMD's prefixes:
    // amd-<host>-device-*), its targets the extras.
    std::fs::create_dir(p.join("amd")).unwrap();
    let amd = device_wheel(
        &p.join("a"),
        "amd-demo-device-gfx12",
        "1.0",
        &["demo == 1.0"],
        &["gfx1200", "gfx1201"],
    );
    let out_amd = device_extras(p, &host, "amd/demo-1.0-py3-none-any.whl", &[&amd]).success();
    assert!(
        out_amd
            .stdout
            .contains("extras device-gfx1200, device-gfx1201, device-all"),
        "{}",
        out_amd.stdout
    );
    // The host's version spelled with a zero more is the host's version
    // (PEP 440, as pip compares the pins), as `check` and `thin` judge it.
    let padded = device_wheel(
        &p.join("p"),
        "demo-device-gfx1200",
        "1.0.0",
        &["demo==1.0.0"],
        &["gfx1200"],
    );
    std::fs::create_dir(p.join("padded")).unwrap();
    device_extras(p, &host, "padded/demo-1.0-py3-none-any.whl", &[&padded]).success();
    // Twice: the extras are there already.
    std::fs::create_dir(p.join("once")).unwrap();
    device_extras(p, &host, "once/demo-1.0-py3-none-any.whl", &[&good]).success();
    let once = p.join("once/demo-1.0-py3-none-any.whl");
    device_extras(p, &once, out, &[&good]).fails(1, "demo already has an extra device-gfx1201");
    assert!(!p.join("out").exists());
}
