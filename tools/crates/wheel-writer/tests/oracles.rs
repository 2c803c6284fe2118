//! Builds wheels and hands them to the real Python packaging tools from the
//! repository venv: `wheel unpack` (checks RECORD hashes), `twine check
//! --strict`, `check-wheel-contents`, `pip install` + import, and zipfile.

use crate::manifest::Manifest;
use std::path::{Path, PathBuf};
use std::process::Command;

fn venv_bin() -> PathBuf {
    let dir = match std::env::var_os("ROCM_WHEEL_VENV") {
        Some(v) => PathBuf::from(v),
        // Run time, not env!: a shared target directory can hold a test
        // compiled in a checkout at another path.
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo"))
            .join("../../../.venv"),
    };
    let bin = dir.join("bin");
    for tool in ["python", "wheel", "twine", "check-wheel-contents"] {
        assert!(
            bin.join(tool).exists(),
            "{} not found: run `make setup` first (or set ROCM_WHEEL_VENV to a venv with wheel, twine, check-wheel-contents)",
            bin.join(tool).display()
        );
    }
    bin
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
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
    let bin = venv_bin();
    let tmp = tempfile::tempdir().unwrap();
    let m = pure_project(&tmp.path().join("src"));
    let out_dir = tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let name = crate::wheel_file_name(&m).unwrap();
    assert_eq!(name, "rwtest_pkg-1.2.3rc1-py3-none-any.whl");
    let whl = out_dir.join(&name);
    crate::build(&m, &whl, &crate::Options::default()).unwrap();
    // Nothing but the wheel is left in the output directory.
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1);

    let unpack = tmp.path().join("unpack");
    run(Command::new(bin.join("wheel"))
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

    let twine = run(Command::new(bin.join("twine"))
        .args(["check", "--strict"])
        .arg(&whl));
    assert!(twine.contains("PASSED"), "{twine}");
    run(Command::new(bin.join("check-wheel-contents")).arg(&whl));

    assert_zipfile_layout(&bin, &whl);
    assert_installs_and_imports(&bin, tmp.path(), &whl);
}

/// Python's zipfile: CRCs, order, permissions, timestamps.
fn assert_zipfile_layout(bin: &Path, whl: &Path) {
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
    run(Command::new(bin.join("python")).args(["-c", py]).arg(whl));
}

/// pip installs the wheel; the package imports, and its metadata, entry
/// points and `.data/scripts` file are there.
fn assert_installs_and_imports(bin: &Path, tmp: &Path, whl: &Path) {
    let target = tmp.join("site");
    run(Command::new(bin.join("python"))
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
    let out = run(Command::new(bin.join("python"))
        .args(["-c", check])
        .env("PYTHONPATH", &target));
    assert!(out.contains("import ok"), "{out}");
    let script = target.join("bin/rwtest-sh");
    assert!(script.is_file(), "the .data/scripts file was not installed");
}

#[test]
fn platform_wheel_with_real_elf() {
    let bin = venv_bin();
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
    crate::build(&m, &whl, &crate::Options::default()).unwrap();
    let unpack = tmp.path().join("unpack");
    run(Command::new(bin.join("wheel"))
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
    run(Command::new(bin.join("python"))
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
    let out = run(Command::new(bin.join("python"))
        .args(["-c", py])
        .env("PYTHONPATH", &target));
    assert!(out.contains("zlib 1."), "{out}");
}

/// Reads a zip with Python's zipfile and checks every entry's bytes.
fn python_reads(bin: &Path, zip: &Path, expect: &[(String, Vec<u8>)]) {
    let listing = tempfile::NamedTempFile::new().unwrap();
    let mut text = String::new();
    for (name, data) in expect {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!("{name}\t{hex}\n"));
    }
    std::fs::write(listing.path(), text).unwrap();
    let py = r#"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert [i.filename for i in z.infolist()] == [n for n, _ in want]
for n, h in want:
    assert z.read(n) == bytes.fromhex(h), n
print("ok", len(want))
"#;
    let out = run(Command::new(bin.join("python"))
        .args(["-c", py])
        .arg(zip)
        .arg(listing.path()));
    assert!(out.starts_with("ok"), "{out}");
}

#[test]
fn zip64_layout_is_read_by_python_and_the_zip_crate() {
    let bin = venv_bin();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("z64.zip");
    let entries: Vec<(String, Vec<u8>)> = (0..5)
        .map(|i| {
            (
                format!("dir/f{i}.txt"),
                format!("entry {i} ").repeat(i * 100).into_bytes(),
            )
        })
        .collect();
    for level in [0, 6] {
        let f = std::fs::File::create(&path).unwrap();
        let mut z = crate::parallel_zip::ParallelZipWriter::new(f, None, level);
        z.force_zip64();
        for (n, d) in &entries {
            z.add_bytes(n, d, 0o644).unwrap();
        }
        z.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        let has = |sig: &[u8]| raw.windows(sig.len()).any(|w| w == sig);
        // ZIP64 end record and locator, and a ZIP64 extra (id 1, 16 bytes) in a local header.
        assert!(has(b"PK\x06\x06") && has(b"PK\x06\x07") && has(b"\x01\x00\x10\x00"));
        python_reads(&bin, &path, &entries);
        let mut a = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        for (n, d) in &entries {
            let mut back = Vec::new();
            std::io::Read::read_to_end(&mut a.by_name(n).unwrap(), &mut back).unwrap();
            assert_eq!(&back, d, "{n}");
        }
    }
}

#[test]
fn more_than_65535_entries() {
    let bin = venv_bin();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("many.zip");
    let entries: Vec<(String, Vec<u8>)> = (0..70_000)
        .map(|i| (format!("m/{i:05}"), vec![(i % 251) as u8]))
        .collect();
    let mut z =
        crate::parallel_zip::ParallelZipWriter::new(std::fs::File::create(&path).unwrap(), None, 0);
    for (n, d) in &entries {
        z.add_bytes(n, d, 0o644).unwrap();
    }
    z.finish().unwrap();
    let raw = std::fs::read(&path).unwrap();
    assert!(
        raw.windows(4).any(|w| w == b"PK\x06\x06"),
        "no ZIP64 end record"
    );
    python_reads(&bin, &path, &entries);
    assert_eq!(
        zip::ZipArchive::new(std::fs::File::open(&path).unwrap())
            .unwrap()
            .len(),
        70_000
    );
}

/// Versions for [`versions_and_requirements_agree_with_packaging`]: valid
/// ones in unusual spellings, and invalid ones.
const VERSIONS: &[&str] = &[
    "0.7.1",
    "v1.0",
    "1.0-1",
    "1.0.alpha.2",
    "1.0c1",
    "1.0-preview-3",
    "01.002",
    "0!1.0",
    "2!1.0",
    "1.0.dev",
    "1.0rev",
    "1.0a1.post2.dev3+Ubuntu-01_x",
    "1.0+abc.5",
    " 1.0 ",
    "1.0post-",
    "1.0.post",
    "1.0-r4",
    "1.0_a_1",
    "1.0.RC.1",
    "1!",
    "",
    "1.",
    "a1",
    "1.0+",
    "1.0+a..b",
    "1.0.x",
    "1.0 2",
    "1.0-",
    "1..0",
    "1.0+ab_",
    "1.0a",
    "1.0b2-3",
    "1.0.0.0.0.0.1",
    "1.0dev-5",
    "1.0+-a",
];

/// Invalid requirements for [`versions_and_requirements_agree_with_packaging`]; the
/// valid ones are the parser's unit tests' (`pep508::tests::VALID`).
const INVALID_REQUIREMENTS: &[&str] = &[
    "",
    "-foo",
    "foo>=",
    "foo=1",
    "foo[bar",
    "foo; python_versionn > '3'",
    "foo; python_version",
    "foo; python_version > '3",
    "foo >=1 bar",
    "foo~=1",
    "foo>=1.*",
    "foo (>=1",
    "foo==1.0+local.*",
    "foo; os_name=='a'or os_name=='b'",
];

/// Our PEP 440 normaliser and PEP 508 parser against `packaging`, the
/// reference implementation pip uses.
#[test]
fn versions_and_requirements_agree_with_packaging() {
    let bin = venv_bin();
    let versions = VERSIONS;
    let reqs: Vec<&str> = crate::pep508::tests::VALID
        .iter()
        .chain(INVALID_REQUIREMENTS)
        .copied()
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let mut input = String::new();
    for v in versions {
        input.push_str(&format!("V\t{v}\n"));
    }
    for r in &reqs {
        input.push_str(&format!("R\t{r}\n"));
    }
    std::fs::write(tmp.path().join("in.txt"), &input).unwrap();
    let py = r#"
import sys
from packaging.version import Version
from packaging.requirements import Requirement
for line in open(sys.argv[1]):
    kind, text = line.rstrip("\n").split("\t", 1)
    try:
        out = str(Version(text)) if kind == "V" else (Requirement(text) and "ok")
    except Exception:
        out = "ERR"
    print(out)
"#;
    let out = run(Command::new(bin.join("python"))
        .args(["-c", py])
        .arg(tmp.path().join("in.txt")));
    let theirs: Vec<&str> = out.lines().collect();
    let mut disagree = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let ours = wheel_format::normalize_version(v).unwrap_or_else(|_| "ERR".into());
        if ours != theirs[i] {
            disagree.push(format!(
                "version {v:?}: ours {ours:?}, packaging {:?}",
                theirs[i]
            ));
        }
    }
    for (i, r) in reqs.iter().enumerate() {
        let ours = if crate::pep508::parse_requirement(r).is_ok() {
            "ok"
        } else {
            "ERR"
        };
        let t = theirs[versions.len() + i];
        if ours != t {
            disagree.push(format!("requirement {r:?}: ours {ours}, packaging {t}"));
        }
    }
    assert!(
        disagree.is_empty(),
        "disagreements with packaging:\n{}",
        disagree.join("\n")
    );
}
