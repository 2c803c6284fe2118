//! Which DT_RUNPATH / DT_RPATH entries a repaired wheel keeps, and why.

use std::collections::BTreeSet;

use manylinux_check::wheel::{normalize, SITE_PACKAGES};
use manylinux_check::{expand_origin, is_build_tree_rpath, DEFAULT_ALLOWED_RPATHS};
use serde::Serialize;

/// Why an entry is kept or dropped (the `reason` of the JSON report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Kept: a `$ORIGIN` directory the wheel installs files in.
    InWheel,
    /// Kept: the ROCm install location, `/opt/rocm/lib`.
    RocmInstall,
    /// Kept: `$ORIGIN/…` reaching TheRock's pip SDK next to site-packages.
    RocmSdk,
    /// Dropped: a build tree or temporary directory.
    BuildTree,
    /// Dropped: a `$ORIGIN` directory the wheel does not install (or one
    /// above the file system root).
    NotInWheel,
    /// Dropped: an absolute directory other than `/opt/rocm/lib`.
    Absolute,
    /// Dropped: relative to the process's current directory.
    Relative,
    /// Dropped: empty (the current directory).
    Empty,
    /// Dropped: `$LIB`, `$PLATFORM`, … which cannot be checked.
    DynamicToken,
    /// Dropped: the same directory again.
    Duplicate,
}

impl Reason {
    pub fn keeps(self) -> bool {
        matches!(
            self,
            Reason::InWheel | Reason::RocmInstall | Reason::RocmSdk
        )
    }

    /// Human-readable, for the text report.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::InWheel => "in the wheel",
            Reason::RocmInstall => "ROCm install location",
            Reason::RocmSdk => "TheRock pip SDK (_rocm_sdk_*)",
            Reason::BuildTree => "build tree",
            Reason::NotInWheel => "not installed by the wheel",
            Reason::Absolute => "absolute path outside /opt/rocm/lib",
            Reason::Relative => "relative to the current directory",
            Reason::Empty => "empty (the current directory)",
            Reason::DynamicToken => "loader token that cannot be checked",
            Reason::Duplicate => "duplicate",
        }
    }
}

/// The verdict on each entry of one search path, in order.
pub fn judge_all(list: &[String], origin: &str, installed: &BTreeSet<&str>) -> Vec<Reason> {
    let mut seen = BTreeSet::new();
    list.iter()
        .map(|entry| {
            let key = expand_origin(entry, origin)
                .and_then(|p| normalize(&p))
                .unwrap_or_else(|| entry.trim_end_matches('/').to_string());
            let reason = judge(entry, origin, installed);
            if reason.keeps() && !seen.insert(key) {
                Reason::Duplicate
            } else {
                reason
            }
        })
        .collect()
}

/// The verdict on one entry; `origin` is the installed directory of the
/// ELF file, `installed` every installed path of the wheel.
fn judge(entry: &str, origin: &str, installed: &BTreeSet<&str>) -> Reason {
    if entry.is_empty() {
        return Reason::Empty;
    }
    if is_build_tree_rpath(entry) {
        return Reason::BuildTree;
    }
    if let Some(dir) = expand_origin(entry, origin) {
        return origin_verdict(&dir, installed);
    }
    if entry.starts_with('$') {
        return Reason::DynamicToken;
    }
    if !entry.starts_with('/') {
        return Reason::Relative;
    }
    let dir = entry.trim_end_matches('/');
    if DEFAULT_ALLOWED_RPATHS.contains(&dir) {
        Reason::RocmInstall
    } else {
        Reason::Absolute
    }
}

/// An expanded `$ORIGIN` entry: TheRock's SDK directories, or one the
/// wheel installs files in.
fn origin_verdict(dir: &str, installed: &BTreeSet<&str>) -> Reason {
    let Some(dir) = normalize(dir) else {
        return Reason::NotInWheel;
    };
    let in_site_packages = dir
        .strip_prefix(SITE_PACKAGES)
        .and_then(|r| r.strip_prefix('/'));
    if in_site_packages.is_some_and(rocm_layout::is_rocm_sdk_dir) {
        return Reason::RocmSdk;
    }
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    if installed.iter().any(|p| p.starts_with(&prefix)) {
        Reason::InWheel
    } else {
        Reason::NotInWheel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(list: &[&str], member_dir: &str) -> Vec<Reason> {
        let files = [
            format!("{SITE_PACKAGES}/pkg/__init__.py"),
            format!("{SITE_PACKAGES}/pkg/_ext.so"),
            format!("{SITE_PACKAGES}/pkg.libs/libdep.so.1"),
        ];
        let installed: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        judge_all(&list, &format!("{SITE_PACKAGES}/{member_dir}"), &installed)
    }

    #[test]
    fn kept_and_dropped() {
        use Reason::*;
        let got = verdicts(
            &[
                "$ORIGIN",
                "$ORIGIN/../pkg.libs",
                "${ORIGIN}/../pkg.libs/",
                "$ORIGIN/../_rocm_sdk_core/lib",
                "$ORIGIN/../_rocm_sdk_libraries_gfx94X_dcgpu/lib",
                "$ORIGIN/../../_rocm_sdk_core/lib",
                "$ORIGIN/../rocm/lib",
                "$ORIGIN/_ext.so.runfiles/__main__/_solib_x86_64/lib",
                "/opt/rocm/lib",
                "/opt/rocm/lib/",
                "/opt/rocm-7.2.0/lib",
                "/usr/local/lib/python3.12/dist-packages/_rocm_sdk_core/lib",
                "",
                "lib",
                "$LIB",
                "$ORIGIN/../../../../../../../..",
            ],
            "pkg",
        );
        assert_eq!(
            got,
            [
                InWheel,
                InWheel,
                Duplicate,
                RocmSdk,
                RocmSdk,
                NotInWheel,
                NotInWheel,
                BuildTree,
                RocmInstall,
                Duplicate,
                Absolute,
                Absolute,
                Empty,
                Relative,
                DynamicToken,
                NotInWheel,
            ]
        );
    }

    #[test]
    fn the_sdk_is_reached_from_the_member_s_own_depth() {
        // Two levels down (jax_plugins/xla_rocm7/), `../..` reaches
        // site-packages and `..` does not.
        let got = verdicts(
            &[
                "$ORIGIN/../../_rocm_sdk_core/lib",
                "$ORIGIN/../_rocm_sdk_core/lib",
            ],
            "ns/sub",
        );
        assert_eq!(got, [Reason::RocmSdk, Reason::NotInWheel]);
    }
}
