//! Scratch directories and files: making them, copying into them, and
//! proving a failed command left them alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A scratch directory named after the package whose tests run (cargo
/// sets `CARGO_PKG_NAME` for them), so a leftover one says whose it is.
pub fn tempdir() -> tempfile::TempDir {
    let pkg = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "test".into());
    tempfile::Builder::new()
        .prefix(&format!("{pkg}-test-"))
        .tempdir()
        .unwrap()
}

/// Every file under `dir` (dot files included) with its contents: a failed
/// command must leave this unchanged — input untouched, no output, no
/// leftover temporary file.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts `dir` holds exactly what `before` recorded.
#[track_caller]
pub fn assert_unchanged(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>) {
    let after = snapshot(dir);
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&after),
        names(before),
        "files in {} changed (output or temporary file left behind?)",
        dir.display()
    );
    for (p, data) in before {
        assert!(after[p] == *data, "{} was modified", p.display());
    }
}

/// The names of the files in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Asserts the directory `dir` is empty (a refused command wrote nothing).
#[track_caller]
pub fn assert_empty_dir(dir: &Path) {
    let left = file_names(dir);
    assert!(left.is_empty(), "{} holds {left:?}", dir.display());
}

/// Makes `out` atomically: `make` writes a temporary file next to it (a
/// tool's `-o`, so it has a name), which replaces `out` only once `make`
/// returns.
pub fn produce(out: &Path, make: impl FnOnce(&Path)) {
    let dir = out.parent().unwrap();
    let name = out.file_name().unwrap().to_string_lossy();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .unwrap();
    make(tmp.path());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    tmp.persist(out).unwrap();
}

/// Copies `src` into `dir` under `name` and returns the copy's path.
pub fn copy_in(src: &Path, dir: &Path, name: &str) -> PathBuf {
    let dst = dir.join(name);
    std::fs::copy(src, &dst).unwrap_or_else(|e| panic!("cannot copy {}: {e}", src.display()));
    dst
}

/// The SHA-256 of the file at `path`, in hex.
pub fn sha256_file(path: &Path) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(std::fs::read(path).unwrap());
    d.iter().map(|b| format!("{b:02x}")).collect()
}
