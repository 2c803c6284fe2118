//! Whether a host binary's kpack references resolve in an installed tree:
//! for each GPU target, the archive the loader would pick for each wrapper,
//! and the key in it, as rocm-kpack's loader resolves them.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::archive::Toc;
use crate::host::WrapperRef;
use crate::marker::GFXARCH;

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
    /// Every search path is absolute or climbs out of the install root, so
    /// no archive of a wheel can ever serve it.
    OutsideTree {
        binary: String,
        wrapper: usize,
        target: String,
        search_paths: Vec<String>,
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
            Problem::OutsideTree { binary, wrapper, target, search_paths } => write!(
                f,
                "{binary}: wrapper {wrapper} has no {target} code: every search path of its marker ({}) is absolute or leaves the install root, so no wheel's archive can serve it (rebuild with search paths relative to the binary's directory)",
                search_paths.join(", ")
            ),
            Problem::NoKernel { binary, wrapper, target, archive, key } => write!(
                f,
                "{binary}: wrapper {wrapper}: {archive} serves {target} but has no {key} (the loader stops there)"
            ),
        }
    }
}

/// One line per (binary, archive group) left without code, for the
/// targets it lacks: `check`'s summary of its [`Problem::NoArchive`]s. The
/// group is the archives' name prefix (`rccl_lib` of
/// `rccl_lib_gfx1201.kpack`, as TheRock's splitter names them); archives
/// named after the target alone have none and are not summarised.
pub fn missing_groups(problems: &[Problem]) -> Vec<String> {
    let mut by: BTreeMap<(&str, String), Vec<&str>> = BTreeMap::new();
    for p in problems {
        if let Problem::NoArchive {
            binary,
            target,
            searched,
            ..
        } = p
        {
            let Some(first) = searched.first() else {
                continue;
            };
            let base = first.rsplit('/').next().unwrap_or(first);
            let group = (base.strip_suffix(".kpack"))
                .and_then(|s| s.strip_suffix(target.as_str()))
                .map(|s| s.trim_end_matches(['_', '-']))
                .unwrap_or_default();
            if !group.is_empty() {
                let targets = by.entry((binary.as_str(), group.to_string())).or_default();
                if !targets.contains(&target.as_str()) {
                    targets.push(target);
                }
            }
        }
    }
    (by.into_iter())
        .map(|((binary, group), targets)| {
            format!(
                "{binary}: archive group {group} has no code for {} in the wheels given: the device \
                 wheels for them lack {group}_<target>.kpack (install them, or rebuild the set with \
                 the group's archives)",
                targets.join(", ")
            )
        })
        .collect()
}

/// `base/rel` with `.` and `..` resolved (paths relative to the install
/// root); `None` when it leaves the root (outside site-packages).
pub fn join(base: &str, rel: &str) -> Option<String> {
    wheel_format::normalize_components(&format!("{base}/{rel}"))
}

/// The archive the loader opens for search path `rel` of a binary in `dir`
/// and `target`: it joins the two, then replaces the first `@GFXARCH@` of
/// the whole path (one in a directory name counts). `None` when absolute
/// or outside the tree.
pub fn archive_path(dir: &str, rel: &str, target: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let joined = if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    };
    wheel_format::normalize_components(&joined.replacen(GFXARCH, target, 1))
}

/// The archives of an installed tree (path -> TOC), indexed once so each
/// lookup takes constant time whatever their size.
pub struct Archives<'a> {
    by_path: HashMap<&'a str, Indexed<'a>>,
}

struct Indexed<'a> {
    targets: HashSet<&'a str>,
    kernels: HashSet<(&'a str, &'a str)>,
}

impl<'a> Archives<'a> {
    pub fn new(archives: impl IntoIterator<Item = (&'a str, &'a Toc)>) -> Archives<'a> {
        let by_path = archives
            .into_iter()
            .map(|(path, toc)| {
                let kernels = toc
                    .binaries
                    .iter()
                    .flat_map(|(k, arches)| {
                        arches.iter().map(move |(a, _)| (k.as_str(), a.as_str()))
                    })
                    .collect();
                let targets = toc.gfx_arches.iter().map(String::as_str).collect();
                (path, Indexed { targets, kernels })
            })
            .collect();
        Archives { by_path }
    }
}

/// Checks every wrapper of `binary` (its path in the installed tree) for
/// every target in `targets`, against the archives of the tree. Absolute
/// search paths are outside the tree and count as absent.
pub fn check_binary(
    binary: &str,
    wrappers: &[WrapperRef],
    archives: &Archives<'_>,
    targets: &[String],
) -> Vec<Problem> {
    let dir = binary.rsplit_once('/').map_or("", |(d, _)| d);
    let mut problems = Vec::new();
    for w in wrappers {
        let key = w.key();
        for target in targets {
            let mut seen = HashSet::new();
            let candidates: Vec<String> = w
                .marker
                .search_paths
                .iter()
                .filter_map(|p| archive_path(dir, p, target))
                .filter(|c| seen.insert(c.clone()))
                .collect();
            if candidates.is_empty() {
                problems.push(Problem::OutsideTree {
                    binary: binary.into(),
                    wrapper: w.index,
                    target: target.clone(),
                    search_paths: w.marker.search_paths.clone(),
                });
                continue;
            }
            let hit = candidates.iter().find_map(|c| {
                archives
                    .by_path
                    .get(c.as_str())
                    .filter(|a| a.targets.contains(target.as_str()))
                    .map(|a| (c, a))
            });
            match hit {
                None => problems.push(Problem::NoArchive {
                    binary: binary.into(),
                    wrapper: w.index,
                    target: target.clone(),
                    searched: candidates,
                }),
                Some((path, a)) => {
                    if !a.kernels.contains(&(key.as_str(), target.as_str())) {
                        problems.push(Problem::NoKernel {
                            binary: binary.into(),
                            wrapper: w.index,
                            target: target.clone(),
                            archive: path.clone(),
                            key: key.clone(),
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

    fn wrapper_with(name: &str, paths: &[&str]) -> WrapperRef {
        WrapperRef {
            index: 0,
            co_index: 0,
            marker: std::sync::Arc::new(Marker {
                kernel_name: name.into(),
                search_paths: paths.iter().map(|p| p.to_string()).collect(),
            }),
        }
    }

    fn wrapper(name: &str) -> WrapperRef {
        wrapper_with(
            name,
            &[".kpack/@GFXARCH@.kpack", "../.kpack/@GFXARCH@.kpack"],
        )
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
        let toc1201 = toc("gfx1201", &["a#0"]);
        let archives = Archives::new([("pkg/.kpack/gfx1201.kpack", &toc1201)]);
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
        // All paths absolute or escaping: said so, not "at " with nothing.
        let outside = wrapper_with("a", &["/opt/@GFXARCH@.kpack", "../../../x/@GFXARCH@.kpack"]);
        let problems = check_binary("pkg/lib/x.so", &[outside], &archives, &targets[..1]);
        let msg = problems[0].to_string();
        assert!(msg.contains("absolute or leaves the install root"), "{msg}");
    }

    #[test]
    fn gfxarch_in_a_directory_name_is_the_one_replaced() {
        // The loader replaces the first @GFXARCH@ of the joined path.
        assert_eq!(
            archive_path("pkg/@GFXARCH@", "@GFXARCH@.kpack", "gfx1201").as_deref(),
            Some("pkg/gfx1201/@GFXARCH@.kpack")
        );
        let toc1201 = toc("gfx1201", &["a#0"]);
        let t = ["gfx1201".to_string()];
        // Found by a plain reading of the paths, not by the loader.
        let literal = Archives::new([("pkg/@GFXARCH@/gfx1201.kpack", &toc1201)]);
        let w = wrapper_with("a", &["gfx1201.kpack"]);
        let bad = check_binary("pkg/@GFXARCH@/x.so", &[w], &literal, &t);
        assert!(matches!(&bad[..], [Problem::NoArchive { .. }]), "{bad:?}");
        // Where the loader looks.
        let loaders = Archives::new([("pkg/gfx1201/@GFXARCH@.kpack", &toc1201)]);
        let w = wrapper_with("a", &["@GFXARCH@.kpack"]);
        let ok = check_binary("pkg/@GFXARCH@/x.so", std::slice::from_ref(&w), &loaders, &t);
        assert!(ok.is_empty(), "{ok:?}");
        let bad = check_binary("pkg/@GFXARCH@/x.so", &[w], &literal, &t);
        assert!(matches!(&bad[..], [Problem::NoArchive { .. }]), "{bad:?}");
    }

    #[test]
    fn a_group_left_without_code_is_named_once() {
        let no = |binary: &str, target: &str, path: &str| Problem::NoArchive {
            binary: binary.into(),
            wrapper: 0,
            target: target.into(),
            searched: vec![path.into()],
        };
        let problems = [
            no(
                "torch/lib/librccl.so",
                "gfx1201",
                "torch/.kpack/rccl_lib_gfx1201.kpack",
            ),
            no(
                "torch/lib/librccl.so",
                "gfx942:xnack+",
                "torch/.kpack/rccl_lib_gfx942:xnack+.kpack",
            ),
            no(
                "torch/lib/librccl.so",
                "gfx1201",
                "torch/.kpack/rccl_lib_gfx1201.kpack",
            ),
            no("jax/_k.so", "gfx1201", "jax/.kpack/gfx1201.kpack"),
        ];
        let got = missing_groups(&problems);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with(
                "torch/lib/librccl.so: archive group rccl_lib has no code for gfx1201, gfx942:xnack+ "
            ),
            "{got:?}"
        );
    }
}
