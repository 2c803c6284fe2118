//! Test helpers: locating the project venv.

use std::path::PathBuf;

/// `<repo>/.venv`, or `$ROCM_WHEEL_VENV`.
pub fn venv() -> PathBuf {
    if let Some(v) = std::env::var_os("ROCM_WHEEL_VENV") {
        return PathBuf::from(v);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../.venv")
}

/// auditwheel's `manylinux-policy.json` inside the venv, if installed.
pub fn auditwheel_policy_json() -> Option<PathBuf> {
    let lib = venv().join("lib");
    for entry in std::fs::read_dir(lib).ok()?.flatten() {
        let p = entry
            .path()
            .join("site-packages/auditwheel/policy/manylinux-policy.json");
        if p.is_file() {
            return Some(p);
        }
    }
    None
}
