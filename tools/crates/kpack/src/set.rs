//! Whether a host binary's kpack references resolve in an installed tree:
//! for each GPU target, the archive the loader would pick for each wrapper,
//! and the key in it, as rocm-kpack's loader resolves them.

use std::collections::BTreeMap;

use crate::archive::Toc;
use crate::host::WrapperRef;

/// Why a wrapper does not resolve for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// No archive serving the target exists at any search path.
    NoArchive {
        binary: String,
        wrapper: usize,
        target: String,
        searched: Vec<String>,
    },
    /// The archive the loader picks lacks the key (it does not try others).
    NoKernel {
        binary: String,
        wrapper: usize,
        target: String,
        archive: String,
        key: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::NoArchive { binary, wrapper, target, searched } => write!(
                f,
                "{binary}: wrapper {wrapper} has no {target} code: no archive for {target} at {} (install the device wheel for {target})",
                searched.join(", ")
            ),
            Problem::NoKernel { binary, wrapper, target, archive, key } => write!(
                f,
                "{binary}: wrapper {wrapper}: {archive} serves {target} but has no {key} (the loader stops there)"
            ),
        }
    }
}

/// `base/rel` with `.` and `..` resolved (paths relative to the install
/// root); `None` when it leaves the root (outside site-packages).
pub fn join(base: &str, rel: &str) -> Option<String> {
    wheel_format::normalize_components(&format!("{base}/{rel}"))
}

/// Checks every wrapper of `binary` (its path in the installed tree) for
/// every target in `targets`, against the archives of the tree (path ->
/// TOC). Absolute search paths are outside the tree and count as absent.
pub fn check_binary(
    binary: &str,
    wrappers: &[WrapperRef],
    archives: &BTreeMap<String, Toc>,
    targets: &[String],
) -> Vec<Problem> {
    let dir = binary.rsplit_once('/').map_or("", |(d, _)| d);
    let mut problems = Vec::new();
    for w in wrappers {
        for target in targets {
            let mut candidates: Vec<String> = Vec::new();
            for p in w
                .marker
                .archive_paths(target)
                .iter()
                .filter(|p| !p.starts_with('/'))
            {
                if let Some(c) = join(dir, p).filter(|c| !candidates.contains(c)) {
                    candidates.push(c);
                }
            }
            let hit = candidates.iter().find_map(|c| {
                archives
                    .get(c)
                    .filter(|t| t.gfx_arches.contains(target))
                    .map(|t| (c, t))
            });
            match hit {
                None => problems.push(Problem::NoArchive {
                    binary: binary.into(),
                    wrapper: w.index,
                    target: target.clone(),
                    searched: candidates,
                }),
                Some((path, toc)) => {
                    if toc.kernel(&w.key(), target).is_none() {
                        problems.push(Problem::NoKernel {
                            binary: binary.into(),
                            wrapper: w.index,
                            target: target.clone(),
                            archive: path.clone(),
                            key: w.key(),
                        });
                    }
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::{Compression, KernelRef};
    use crate::marker::Marker;

    fn wrapper(name: &str) -> WrapperRef {
        WrapperRef {
            index: 0,
            co_index: 0,
            marker: Marker {
                kernel_name: name.into(),
                search_paths: vec![
                    ".kpack/@GFXARCH@.kpack".into(),
                    "../.kpack/@GFXARCH@.kpack".into(),
                ],
            },
        }
    }

    fn toc(target: &str, keys: &[&str]) -> Toc {
        Toc {
            group_name: "g".into(),
            gfx_arch_family: target.into(),
            gfx_arches: vec![target.into()],
            binaries: keys
                .iter()
                .map(|k| {
                    (
                        k.to_string(),
                        vec![(
                            target.to_string(),
                            KernelRef {
                                ordinal: 0,
                                original_size: 1,
                            },
                        )],
                    )
                })
                .collect(),
            compression: Compression::None,
        }
    }

    #[test]
    fn resolves_like_the_loader() {
        assert_eq!(
            join("pkg/lib", "../.kpack/x.kpack").as_deref(),
            Some("pkg/.kpack/x.kpack")
        );
        assert_eq!(join("pkg", "../../.kpack/x.kpack"), None);
        let mut archives = BTreeMap::new();
        archives.insert(
            "pkg/.kpack/gfx1201.kpack".to_string(),
            toc("gfx1201", &["a#0"]),
        );
        let targets = vec!["gfx1201".to_string(), "gfx1200".to_string()];
        let problems = check_binary("pkg/lib/x.so", &[wrapper("a")], &archives, &targets);
        assert_eq!(problems.len(), 1, "{problems:?}");
        let msg = problems[0].to_string();
        assert!(
            msg.contains("no gfx1200 code") && msg.contains("pkg/lib/.kpack/gfx1200.kpack"),
            "{msg}"
        );
        let problems = check_binary("pkg/lib/x.so", &[wrapper("b")], &archives, &targets[..1]);
        assert!(
            matches!(&problems[..], [Problem::NoKernel { key, .. }] if key == "b#0"),
            "{problems:?}"
        );
    }
}
