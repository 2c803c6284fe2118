//! Builds wheels and hands them to the real Python packaging tools from the
//! repository venv: `wheel unpack` (checks RECORD hashes), `twine check
//! --strict`, `check-wheel-contents`, `pip install` + import, and zipfile.

use std::path::Path;
use std::process::Command;
use test_support::venv_bin;
use wheel_writer::Manifest;

/// Runs a command that must succeed; its stdout and stderr.
fn run(cmd: &mut Command) -> String {
    let out = test_support::run(cmd);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A small pure-Python project with every metadata field in use.
fn pure_project(src: &Path) -> Manifest {
    write(&src.join("pkg/__init__.py"), "from .core import VALUE\n");
    write(
        &src.join("pkg/core.py"),
        "VALUE = 42\n\ndef main():\n    print(VALUE)\n",
    );
    write(&src.join("pkg/data/table, with comma.txt"), "x\n");
    write(&src.join("tool.sh"), "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        src.join("tool.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    write(&src.join("LICENSE.txt"), "Apache License 2.0 (test copy)\n");
    write(&src.join("NOTICE"), "Notice\n");
    write(&src.join("README.md"), "# rwtest\n\nA *test* package.\n");
    let s = |p: &str| src.join(p).to_str().unwrap().to_string();
    let json = serde_json::json!({
        "distribution": "RWTest.Pkg",
        "version": "1.2.3rc1",
        "tags": ["py3-none-any"],
        "root_is_purelib": null,
        "metadata": {
            "summary": "A test package built by rocm-wheel",
            "requires_python": ">=3.10",
            "requires_dist": ["jax-rocm7-pjrt==0.7.1", "numpy>=1.26; python_version >= \"3.12\"", "foo[bar,baz]>=1", "pytest; extra == \"test\""],
            "provides_extra": ["test"],
            "license_expression": "Apache-2.0",
            "license_files": [{"path": "LICENSE.txt", "src": s("LICENSE.txt")}, {"path": "third_party/NOTICE", "src": s("NOTICE")}],
            "project_urls": [["Homepage", "https://example.org"], ["Source", "https://example.org/src"]],
            "classifiers": ["Programming Language :: Python :: 3", "Operating System :: POSIX :: Linux"],
            "keywords": ["jax", "rocm"],
            "author": "A. Author", "author_email": "a@example.org",
            "maintainer": "M. Aintainer", "maintainer_email": "m@example.org",
            "description": {"src": s("README.md"), "content_type": "text/markdown"}
        },
        "entry_points": {"console_scripts": {"rwtest": "pkg.core:main"}, "jax_plugins": {"xla_rocm7": "pkg"}},
        "files": [
            {"path": "pkg/core.py", "src": s("pkg/core.py")},
            {"path": "pkg/__init__.py", "src": s("pkg/__init__.py")},
            {"path": "pkg/data/table, with comma.txt", "src": s("pkg/data/table, with comma.txt")},
            {"path": "rwtest_pkg-1.2.3rc1.data/scripts/rwtest-sh", "src": s("tool.sh")}
        ]
    });
    Manifest::from_json(&json.to_string()).unwrap()
}

#[test]
fn pure_wheel_passes_the_oracles() {
    let tmp = tempfile::tempdir().unwrap();
    let m = pure_project(&tmp.path().join("src"));
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let name = wheel_writer::wheel_file_name(&m).unwrap();
    assert_eq!(name, "rwtest_pkg-1.2.3rc1-py3-none-any.whl");
    let whl = out_dir.join(&name);
    wheel_writer::build(&m, &whl, &wheel_writer::Options::default()).unwrap();
    // Nothing but the wheel is left in the output directory.
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1);

    let unpack = tmp.path().join("unpack");
    run(Command::new(venv_bin("wheel"))
        .args(["unpack", "-d"])
        .arg(&unpack)
        .arg(&whl));
    let root = unpack.join("rwtest_pkg-1.2.3rc1");
    let meta =
        std::fs::read_to_string(root.join("rwtest_pkg-1.2.3rc1.dist-info/METADATA")).unwrap();
    assert!(
        meta.starts_with("Metadata-Version: 2.4\nName: RWTest.Pkg\nVersion: 1.2.3rc1\n"),
        "{meta}"
    );
    assert!(
        meta.contains("\nLicense-File: third_party/NOTICE\n"),
        "{meta}"
    );
    assert!(
        meta.ends_with("\n\n# rwtest\n\nA *test* package.\n"),
        "{meta}"
    );
    assert!(root
        .join("rwtest_pkg-1.2.3rc1.dist-info/licenses/third_party/NOTICE")
        .is_file());

    let twine = run(Command::new(venv_bin("twine"))
        .args(["check", "--strict"])
        .arg(&whl));
    assert!(twine.contains("PASSED"), "{twine}");
    run(Command::new(venv_bin("check-wheel-contents")).arg(&whl));

    assert_zipfile_layout(&whl);
    assert_installs_and_imports(tmp.path(), &whl);
}

/// Python's zipfile: CRCs, order, permissions, timestamps.
fn assert_zipfile_layout(whl: &Path) {
    let py = r#"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
names = z.namelist()
di = [i for i, n in enumerate(names) if ".dist-info/" in n]
assert di == list(range(len(names) - len(di), len(names))), names
assert names[-1].endswith(".dist-info/RECORD"), names
payload = names[:len(names) - len(di)]
assert payload == sorted(payload), payload
for i in z.infolist():
    assert i.date_time == (1980, 1, 1, 0, 0, 0), (i.filename, i.date_time)
    assert i.extra == b"", i.filename
    mode = i.external_attr >> 16
    want = 0o100755 if i.filename.endswith("rwtest-sh") else 0o100644
    assert mode == want, (i.filename, oct(mode))
print("zipfile ok")
"#;
    run(Command::new(venv_bin("python")).args(["-c", py]).arg(whl));
}

/// pip installs the wheel; the package imports, and its metadata, entry
/// points and `.data/scripts` file are there.
fn assert_installs_and_imports(tmp: &Path, whl: &Path) {
    let target = tmp.join("site");
    run(Command::new(venv_bin("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&target)
        .arg(whl));
    let check = r#"
import importlib.metadata as md, pkg
assert pkg.VALUE == 42
d = md.distribution("rwtest-pkg")
assert d.version == "1.2.3rc1", d.version
eps = {(e.group, e.name): e.value for e in d.entry_points}
assert eps[("jax_plugins", "xla_rocm7")] == "pkg", eps
assert eps[("console_scripts", "rwtest")] == "pkg.core:main", eps
assert d.metadata["License-Expression"] == "Apache-2.0"
assert "foo[bar,baz]>=1" in d.requires, d.requires
print("import ok")
"#;
    let out = run(Command::new(venv_bin("python"))
        .args(["-c", check])
        .env("PYTHONPATH", &target));
    assert!(out.contains("import ok"), "{out}");
    let script = target.join("bin/rwtest-sh");
    assert!(script.is_file(), "the .data/scripts file was not installed");
}

#[test]
fn platform_wheel_with_real_elf() {
    let tmp = tempfile::tempdir().unwrap();
    // A real shared object from the machine as payload: root_is_purelib
    // becomes false automatically.
    let so = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libz.so.1 not found on this machine");
    write(
        &tmp.path().join("plugin/__init__.py"),
        "import os\nLIB = os.path.join(os.path.dirname(__file__), 'libz.so.1')\n",
    );
    let json = serde_json::json!({
        "distribution": "rwtest-plat",
        "version": "0.7.1",
        "tags": ["py3-none-manylinux_2_28_x86_64"],
        "metadata": {"summary": "platform test"},
        "files": [
            {"path": "rwtest_plat/__init__.py", "src": tmp.path().join("plugin/__init__.py")},
            {"path": "rwtest_plat/libz.so.1", "src": so}
        ]
    });
    let m = Manifest::from_json(&json.to_string()).unwrap();
    let whl = tmp
        .path()
        .join("rwtest_plat-0.7.1-py3-none-manylinux_2_28_x86_64.whl");
    wheel_writer::build(&m, &whl, &wheel_writer::Options::default()).unwrap();
    let unpack = tmp.path().join("unpack");
    run(Command::new(venv_bin("wheel"))
        .args(["unpack", "-d"])
        .arg(&unpack)
        .arg(&whl));
    let wheel =
        std::fs::read_to_string(unpack.join("rwtest_plat-0.7.1/rwtest_plat-0.7.1.dist-info/WHEEL"))
            .unwrap();
    assert!(
        wheel.contains("Root-Is-Purelib: false\nTag: py3-none-manylinux_2_28_x86_64\n"),
        "{wheel}"
    );
    assert_eq!(
        std::fs::read(unpack.join("rwtest_plat-0.7.1/rwtest_plat/libz.so.1")).unwrap(),
        std::fs::read(so).unwrap()
    );
    let py = r#"
import ctypes, rwtest_plat
lib = ctypes.CDLL(rwtest_plat.LIB)
lib.zlibVersion.restype = ctypes.c_char_p
print("zlib", lib.zlibVersion().decode())
"#;
    let target = tmp.path().join("site");
    run(Command::new(venv_bin("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&target)
        .arg(&whl));
    let out = run(Command::new(venv_bin("python"))
        .args(["-c", py])
        .env("PYTHONPATH", &target));
    assert!(out.contains("zlib 1."), "{out}");
}
