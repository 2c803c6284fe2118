//! `check` must agree with `auditwheel show` (the venv's, as the oracle) on
//! the platform tag of real PyPI wheels. Downloads are pinned and cached in
//! `tools/target/test-cache/pypi/`, so reruns are offline.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    build_so, build_so_for, glibc_stub, make_wheel, read, stub_lib_for, test_cache, venv_bin, Cpu,
};
use manylinux_check::{check_wheel_file, Options};

/// (requirement, --platform, --python-version): varied on purpose — a
/// manylinux1 wheel, manylinux2014 ones (Rust/C), a manylinux_2_28 one, and
/// two with vendored libraries in `*.libs/` (auditwheel-repaired).
const WHEELS: &[(&str, &str, &str)] = &[
    ("markupsafe==2.0.1", "manylinux1_x86_64", "3.8"),
    ("markupsafe==3.0.2", "manylinux2014_x86_64", "3.12"),
    ("orjson==3.10.12", "manylinux2014_x86_64", "3.12"),
    ("msgpack==1.1.0", "manylinux2014_x86_64", "3.12"),
    ("cryptography==44.0.0", "manylinux_2_28_x86_64", "3.12"),
    ("pillow==11.0.0", "manylinux_2_28_x86_64", "3.12"),
    ("pyzmq==26.2.0", "manylinux_2_28_x86_64", "3.12"),
];

/// The cached wheel for `req` on `platform`, downloading it if needed.
fn fetch(req: &str, platform: &str, python: &str) -> PathBuf {
    let (name, version) = req.split_once("==").unwrap();
    // Wheel names normalise the project name (`markupsafe` -> `MarkupSafe`
    // upstream), so match case-insensitively.
    let prefix = format!("{}-{version}-", name.replace('-', "_")).to_lowercase();
    let pyv = format!("cp{}", python.replace('.', ""));
    let glibc_tag = platform.to_string();
    let find = |dir: &Path| -> Option<PathBuf> {
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy().to_lowercase();
                n.starts_with(&prefix)
                    && n.ends_with(".whl")
                    && (n.contains(&format!("-{pyv}-")) || n.contains("-abi3-"))
                    && n.contains(&glibc_tag.to_lowercase())
            })
    };
    let dir = test_cache("pypi");
    if let Some(p) = find(&dir) {
        return p;
    }
    let out = Command::new(venv_bin("pip"))
        .args(["download", "--quiet", "--only-binary", ":all:", "--no-deps"])
        .args([
            "--platform",
            platform,
            "--python-version",
            python,
            "--implementation",
            "cp",
        ])
        .arg("--dest")
        .arg(&dir)
        .arg(req)
        .output()
        .expect("running pip");
    assert!(
        out.status.success(),
        "pip download {req} failed (network needed on the first run):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    find(&dir).unwrap_or_else(|| panic!("pip downloaded no {platform} wheel for {req}"))
}

/// `auditwheel show --json` -> overall_tag.
fn auditwheel_tag(wheel: &Path) -> String {
    let out = Command::new(venv_bin("auditwheel"))
        .args(["show", "--json"])
        .arg(wheel)
        .output()
        .expect("running auditwheel");
    assert!(
        out.status.success(),
        "auditwheel show failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("auditwheel JSON");
    v["overall_tag"].as_str().expect("overall_tag").to_string()
}

#[test]
fn agrees_with_auditwheel_on_pypi_wheels() {
    let mut table = Vec::new();
    for (req, platform, python) in WHEELS {
        let wheel = fetch(req, platform, python);
        let ours = check_wheel_file(&wheel, &Options::default()).unwrap();
        let theirs = auditwheel_tag(&wheel);
        table.push(format!(
            "{req}: ours {:?}, auditwheel {theirs}",
            ours.platform_tag
        ));
        assert_eq!(
            ours.platform_tag.as_deref(),
            Some(theirs.as_str()),
            "{req}: disagreement with auditwheel show\n{}",
            ours.to_human()
        );
        // These are published, repaired wheels: nothing at error level.
        assert!(!ours.has_errors(), "{req}:\n{}", ours.to_human());
    }
    eprintln!("{}", table.join("\n"));
    // The set must cover several distinct answers, or agreement means little.
    let distinct: std::collections::BTreeSet<&str> = table
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert!(distinct.len() >= 4, "{distinct:?}");
}

/// The oracle also agrees on synthetic wheels that need a newer GLIBCXX,
/// use a forbidden libz symbol, or need x86-64-v3.
#[test]
fn agrees_with_auditwheel_on_synthetic_wheels() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let v = d.join("cxx.map");
    std::fs::write(&v, "GLIBCXX_3.4.19 { global: old_fn; local: *; };\nGLIBCXX_3.4.30 { global: new_fn; } GLIBCXX_3.4.19;\n")
        .unwrap();
    let cxx = build_so(
        d,
        "libstdc++.so.6",
        "int old_fn(void){return 1;}\nint new_fn(void){return 2;}\n",
        &[
            "-Wl,-soname,libstdc++.so.6",
            &format!("-Wl,--version-script={}", v.display()),
        ],
    );
    let z = build_so(
        d,
        "libz.so.1",
        "int uncompress2(void){return 0;}\n",
        &["-Wl,-soname,libz.so.1"],
    );
    let cases: &[(&str, &str, Vec<String>)] = &[
        (
            "old",
            "int old_fn(void); int f(void){return old_fn();}",
            vec![cxx.display().to_string()],
        ),
        (
            "new",
            "int new_fn(void); int f(void){return new_fn();}",
            vec![cxx.display().to_string()],
        ),
        (
            "zlib",
            "int uncompress2(void); int f(void){return uncompress2();}",
            vec![z.display().to_string()],
        ),
        (
            "isa",
            "int f(void){return 0;}",
            vec!["-Wl,-z,x86-64-v3".to_string()],
        ),
    ];
    for (name, body, extra) in cases {
        let so = format!("_{name}.cpython-312-x86_64-linux-gnu.so");
        let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
        let src = format!("{body}\nint PyInit__{name}(void){{return 0;}}\n");
        let built = build_so(d, &so, &src, &refs);
        let wheel = format!("syn{name}-1.0-cp312-cp312-linux_x86_64.whl");
        agreed_tag(d, &wheel, &so, &built);
    }
}

/// Packs the extension `built` as `pkg/<so>` into a wheel `file_name` in
/// `dir`, asserts that `check` and `auditwheel show` give it the same
/// platform tag, and returns that tag.
fn agreed_tag(dir: &Path, file_name: &str, so: &str, built: &Path) -> String {
    let member = format!("pkg/{so}");
    let wheel = make_wheel(dir, file_name, false, &[(&member, read(built))]);
    let ours = check_wheel_file(&wheel, &Options::default()).unwrap();
    let theirs = auditwheel_tag(&wheel);
    assert_eq!(
        ours.platform_tag.as_deref(),
        Some(theirs.as_str()),
        "{file_name}\n{}",
        ours.to_human()
    );
    theirs
}

/// And on aarch64 wheels (built with clang and lld) needing glibc 2.17,
/// 2.28 and a newer GLIBCXX: auditwheel's aarch64 policies against ours.
#[test]
fn agrees_with_auditwheel_on_aarch64_wheels() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let arm = Cpu::Aarch64;
    let libc = glibc_stub(arm, d);
    let cxx = stub_lib_for(
        arm,
        d,
        "libstdc++.so.6",
        "int cxx_fn(void){return 1;}\n",
        Some("GLIBCXX_3.4.30 { global: cxx_fn; local: *; };\n"),
    );
    let cases = [
        (
            "old",
            "int old_fn(void); int f(void){return old_fn();}",
            &libc,
        ),
        (
            "new",
            "int new_fn(void); int f(void){return new_fn();}",
            &libc,
        ),
        (
            "cxx",
            "int cxx_fn(void); int f(void){return cxx_fn();}",
            &cxx,
        ),
    ];
    let mut tags = std::collections::BTreeSet::new();
    for (name, body, lib) in cases {
        let so = format!("_{name}.cpython-312-aarch64-linux-gnu.so");
        let src = format!("{body}\nint PyInit__{name}(void){{return 0;}}\n");
        let built = build_so_for(arm, d, &so, &src, &[&lib.display().to_string()]);
        let wheel = format!("arm{name}-1.0-cp312-cp312-linux_aarch64.whl");
        tags.insert(agreed_tag(d, &wheel, &so, &built));
    }
    assert_eq!(tags.len(), 3, "{tags:?}");
}
