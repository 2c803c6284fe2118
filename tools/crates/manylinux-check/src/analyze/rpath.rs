//! rpath hygiene: DT_RPATH / DT_RUNPATH entries that point into the build
//! tree, outside the wheel, at nothing, or somewhere the loader resolves
//! against the current directory.

use std::collections::BTreeSet;

use crate::report::Severity;
use crate::wheel::{display_installed, normalize, parent, SITE_PACKAGES};

use super::resolve::{expand_origin, ElfEval};
use super::{Findings, Options};

/// Substrings of rpath entries that point into a build tree (Bazel's
/// output tree, runfiles, sandboxes, temporary directories).
const BUILD_TREE_MARKERS: &[&str] = &[
    "_solib_",
    "bazel-out",
    "bazel-bin",
    "/execroot/",
    "/_bazel_",
    ".runfiles",
    "/sandbox/",
    "/proc/self/cwd",
];
const TEMP_PREFIXES: &[&str] = &["/tmp/", "/var/tmp/", "/dev/shm/"];

/// Whether a search path entry points into a build tree or a temporary
/// directory (finding `rpath-build-tree`).
pub fn is_build_tree_rpath(entry: &str) -> bool {
    BUILD_TREE_MARKERS.iter().any(|m| entry.contains(m))
        || TEMP_PREFIXES.iter().any(|t| entry.starts_with(t))
}

const FIX_TOOL: &str =
    "rewrite it during wheel assembly (rocm-wheel rpath, or patchelf --set-rpath)";

/// Findings about one ELF's DT_RPATH / DT_RUNPATH: entries that would not
/// work where the wheel is installed, or would load from the wrong place.
pub(super) fn rpath_findings(e: &ElfEval, installed: &BTreeSet<&str>, opts: &Options) -> Findings {
    let mut out = Findings::default();
    let file = Some(e.member.name.as_str());
    let facts = e.facts;
    if !facts.rpath.is_empty() && !facts.runpath.is_empty() {
        out.add(
            Severity::Warning,
            "rpath-and-runpath",
            file,
            "has both DT_RPATH and DT_RUNPATH; the loader ignores DT_RPATH".into(),
            "keep only DT_RUNPATH".into(),
        );
    } else if !facts.rpath.is_empty() {
        out.add(
            Severity::Info,
            "dt-rpath",
            file,
            "uses DT_RPATH (searched before LD_LIBRARY_PATH and inherited by the libraries it loads) rather than DT_RUNPATH".into(),
            "link with -Wl,--enable-new-dtags, or convert it with rocm-wheel rpath".into(),
        );
    }
    let (kind, list) = if facts.runpath.is_empty() {
        ("DT_RPATH", &facts.rpath)
    } else {
        ("DT_RUNPATH", &facts.runpath)
    };
    let search = SearchPath {
        kind,
        list,
        origin: parent(&e.member.installed),
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for entry in list {
        if let Some((severity, code, message, hint)) =
            entry_finding(entry, &search, &mut seen, installed, opts)
        {
            out.add(severity, code, file, message, hint);
        }
    }
    out
}

/// The search path an entry belongs to.
struct SearchPath<'a> {
    /// `DT_RPATH` or `DT_RUNPATH`.
    kind: &'static str,
    list: &'a [String],
    /// Installed directory of the ELF (`$ORIGIN`).
    origin: &'a str,
}

/// What is wrong with one search path entry, if anything (at most one
/// finding per entry: the first problem found).
fn entry_finding(
    entry: &str,
    search: &SearchPath,
    seen: &mut BTreeSet<String>,
    installed: &BTreeSet<&str>,
    opts: &Options,
) -> Option<(Severity, &'static str, String, String)> {
    let SearchPath { kind, list, origin } = *search;
    if entry.is_empty() {
        return Some((
            Severity::Error,
            "rpath-empty-entry",
            format!(
                "{kind} {:?} has an empty entry, which the loader reads as the current directory",
                list.join(":")
            ),
            format!("remove the empty entry; {FIX_TOOL}"),
        ));
    }
    let key = expand_origin(entry, origin)
        .and_then(|p| normalize(&p))
        .unwrap_or_else(|| entry.trim_end_matches('/').to_string());
    if !seen.insert(key) {
        return Some((
            Severity::Warning,
            "rpath-duplicate",
            format!("{kind} lists {entry:?} more than once"),
            format!("drop the duplicate; {FIX_TOOL}"),
        ));
    }
    if is_build_tree_rpath(entry) {
        return Some((
            Severity::Error,
            "rpath-build-tree",
            format!("{kind} entry {entry:?} points into the build tree; it will not exist where the wheel is installed"),
            format!("replace it with a $ORIGIN-relative path into the wheel; {FIX_TOOL}"),
        ));
    }
    if let Some(dir) = expand_origin(entry, origin) {
        return origin_entry_finding(entry, kind, &dir, installed);
    }
    if entry.starts_with('$') {
        return Some((
            Severity::Warning,
            "rpath-dynamic-token",
            format!("{kind} entry {entry:?} uses a loader token that cannot be checked statically"),
            format!("prefer a plain $ORIGIN-relative path; {FIX_TOOL}"),
        ));
    }
    if !entry.starts_with('/') {
        return Some((
            Severity::Error,
            "rpath-relative",
            format!("{kind} entry {entry:?} is relative, so it is resolved against the process's current directory"),
            format!("use $ORIGIN/{entry}; {FIX_TOOL}"),
        ));
    }
    if !opts
        .allow_rpath_prefixes
        .iter()
        .any(|p| under_prefix(entry, p))
    {
        return Some((
            Severity::Error,
            "rpath-absolute",
            format!("{kind} entry {entry:?} is an absolute path outside the allowed prefixes"),
            format!("use a $ORIGIN-relative path, or allow it with --allow-rpath-prefix {entry}"),
        ));
    }
    None
}

/// Whether `entry` is the directory `prefix` or below it (`/opt/rocm`
/// covers `/opt/rocm/lib`, not `/opt/rocm-7.2.0/lib`).
pub(crate) fn under_prefix(entry: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    match entry.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with('/') || prefix.is_empty(),
        None => false,
    }
}

/// A `$ORIGIN` entry, expanded to `dir`: fine if the wheel installs
/// something under it.
fn origin_entry_finding(
    entry: &str,
    kind: &str,
    dir: &str,
    installed: &BTreeSet<&str>,
) -> Option<(Severity, &'static str, String, String)> {
    let Some(dir) = normalize(dir) else {
        return Some((
            Severity::Error,
            "rpath-outside-wheel",
            format!("{kind} entry {entry:?} climbs above the file system root"),
            format!("fix the number of '..'; {FIX_TOOL}"),
        ));
    };
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    if installed.iter().any(|p| p.starts_with(&prefix)) {
        return None;
    }
    let shown = display_installed(&dir);
    Some(if owned_by_wheel(&dir, installed) {
        (
            Severity::Warning,
            "rpath-missing-target",
            format!(
                "{kind} entry {entry:?} resolves to {shown}, which does not exist in the wheel"
            ),
            format!("remove the entry or bundle what it should provide; {FIX_TOOL}"),
        )
    } else {
        (
            Severity::Info,
            "rpath-outside-wheel",
            format!("{kind} entry {entry:?} resolves to {shown}, outside this wheel"),
            "make sure the package that installs it is a declared dependency".into(),
        )
    })
}

/// Whether a missing directory would belong to this wheel (so its absence
/// is a packaging mistake) rather than to another installed package: its
/// nearest existing ancestor lies in a regular package of this wheel (one
/// with `__init__.py`) or in a `*.libs` directory. Namespace directories
/// (`jax_plugins/`), site-packages itself and the prefix are shared.
fn owned_by_wheel(dir: &str, installed: &BTreeSet<&str>) -> bool {
    let exists = |d: &str| {
        let prefix = format!("{d}/");
        installed.iter().any(|p| p.starts_with(&prefix))
    };
    let mut d = dir;
    while d.starts_with(SITE_PACKAGES) && d.len() > SITE_PACKAGES.len() && !exists(d) {
        d = parent(d);
    }
    while d.starts_with(SITE_PACKAGES) && d.len() > SITE_PACKAGES.len() {
        if d.ends_with(".libs") || installed.contains(format!("{d}/__init__.py").as_str()) {
            return true;
        }
        d = parent(d);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_components() {
        assert!(under_prefix("/opt/rocm/lib", "/opt/rocm/lib"));
        assert!(under_prefix("/opt/rocm/lib/", "/opt/rocm/lib"));
        assert!(under_prefix("/opt/rocm/lib", "/opt/rocm/"));
        assert!(!under_prefix("/opt/rocm-7.2.0/lib", "/opt/rocm"));
        assert!(!under_prefix("/opt/rocm/lib64", "/opt/rocm/lib"));
    }

    #[test]
    fn missing_directories_owned_by_the_wheel() {
        let files = [
            format!("{SITE_PACKAGES}/pkg/__init__.py"),
            format!("{SITE_PACKAGES}/pkg/x.so"),
            format!("{SITE_PACKAGES}/ns/sub/__init__.py"),
            format!("{SITE_PACKAGES}/ns/sub/x.so"),
            format!("{SITE_PACKAGES}/pkg.libs/libz.so"),
        ];
        let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let owned = |rel: &str| owned_by_wheel(&format!("{SITE_PACKAGES}/{rel}"), &set);
        assert!(owned("pkg/missing/lib"));
        assert!(owned("ns/sub/lib"));
        assert!(owned("pkg.libs/sub"));
        assert!(!owned("ns/rocm/lib"));
        assert!(!owned("other/lib"));
        assert!(!owned_by_wheel("/prefix/lib", &set));
    }
}
