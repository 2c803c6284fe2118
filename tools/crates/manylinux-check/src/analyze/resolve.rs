//! Library resolution inside the wheel: which DT_NEEDED entries the wheel
//! itself satisfies (through `$ORIGIN` search paths, as the loader would),
//! and for every host ELF how each entry is satisfied and the most
//! compatible policy it meets.

use std::collections::{BTreeMap, BTreeSet};

use crate::elf::{is_dynamic_loader, ElfFacts};
use crate::glob;
use crate::policy::Arch;
use crate::wheel::{normalize, parent, Member, Wheel};

use super::Options;

/// How one DT_NEEDED entry is satisfied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Resolution {
    /// Found inside the wheel at this installed path.
    Bundled(String),
    Loader,
    AllowedExternal,
    /// Must come from the system; fine for policies that whitelist it.
    System,
}

/// One host ELF of the wheel with its resolved dependencies.
pub(super) struct ElfEval<'a> {
    pub member: &'a Member,
    pub facts: &'a ElfFacts,
    pub resolutions: Vec<(String, Resolution)>,
    /// Index of the most compatible policy this ELF satisfies (set by the
    /// caller, which judges the policies).
    pub best: Option<usize>,
}

/// The wheel's host ELF files (those of its architecture) and the
/// libraries they find inside the wheel.
pub(super) struct Bundled<'a> {
    /// Indexes into `wheel.elfs` of the host ELFs.
    pub host: Vec<usize>,
    /// Installed path -> index into `wheel.elfs`, host ELFs only.
    pub by_path: BTreeMap<&'a str, usize>,
    /// Host ELF -> soname -> installed path of the wheel's library.
    pub found: BTreeMap<usize, BTreeMap<String, String>>,
}

/// Resolves the DT_NEEDED entries that the wheel satisfies of every host
/// ELF for `arch`; a library for another CPU satisfies none.
pub(super) fn bundled_libraries(wheel: &Wheel, arch: Arch) -> Bundled<'_> {
    let host: Vec<usize> = (0..wheel.elfs.len())
        .filter(|&i| wheel.elfs[i].1.arch == Some(arch))
        .collect();
    let by_path: BTreeMap<&str, usize> = host
        .iter()
        .map(|&i| (wheel.elfs[i].0.installed.as_str(), i))
        .collect();
    let own_dirs: BTreeMap<usize, Vec<String>> = host
        .iter()
        .map(|&i| (i, origin_dirs(&wheel.elfs[i].0, &wheel.elfs[i].1)))
        .collect();
    let lookup = |dirs: &[String], soname: &str| -> Option<String> {
        dirs.iter()
            .map(|d| format!("{}/{soname}", d.trim_end_matches('/')))
            .find(|p| by_path.contains_key(p.as_str()))
    };
    // First pass: each ELF's own search path.
    let mut found: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
    let mut parents: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &i in &host {
        for soname in &wheel.elfs[i].1.needed {
            if let Some(p) = lookup(&own_dirs[&i], soname) {
                parents.entry(by_path[p.as_str()]).or_default().insert(i);
                found.entry(i).or_default().insert(soname.clone(), p);
            }
        }
    }
    // Then, until nothing changes: a library loaded by another ELF of the
    // wheel can use its loader's search path too (the soname is then already
    // loaded; auditwheel's lddtree also searches the root's paths).
    loop {
        let mut changed = false;
        for &i in &host {
            for soname in &wheel.elfs[i].1.needed {
                if found.get(&i).is_some_and(|m| m.contains_key(soname)) {
                    continue;
                }
                let mut seen = BTreeSet::new();
                let mut queue: Vec<usize> = parents
                    .get(&i)
                    .map(|s| s.iter().copied().collect())
                    .unwrap_or_default();
                while let Some(a) = queue.pop() {
                    if !seen.insert(a) {
                        continue;
                    }
                    if let Some(p) = lookup(&own_dirs[&a], soname) {
                        parents.entry(by_path[p.as_str()]).or_default().insert(i);
                        found.entry(i).or_default().insert(soname.clone(), p);
                        changed = true;
                        break;
                    }
                    if let Some(s) = parents.get(&a) {
                        queue.extend(s.iter().copied());
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    Bundled {
        host,
        by_path,
        found,
    }
}

/// How every host ELF's dependencies are satisfied (`best` not yet set).
pub(super) fn evaluate<'a>(
    wheel: &'a Wheel,
    bundled: &Bundled,
    opts: &Options,
) -> Vec<ElfEval<'a>> {
    let allowed = |soname: &str| opts.allow_external.iter().any(|p| glob::matches(p, soname));
    let mut evals: Vec<ElfEval> = Vec::new();
    for &i in &bundled.host {
        let (member, facts) = (&wheel.elfs[i].0, &wheel.elfs[i].1);
        let resolutions: Vec<(String, Resolution)> = facts
            .needed
            .iter()
            .map(|n| {
                let r = if let Some(p) = bundled.found.get(&i).and_then(|m| m.get(n)) {
                    Resolution::Bundled(p.clone())
                } else if is_dynamic_loader(n) {
                    Resolution::Loader
                } else if allowed(n) {
                    Resolution::AllowedExternal
                } else {
                    Resolution::System
                };
                (n.clone(), r)
            })
            .collect();
        evals.push(ElfEval {
            member,
            facts,
            resolutions,
            best: None,
        });
    }
    evals
}

/// Search directories from an ELF's RUNPATH (or RPATH if there is no
/// RUNPATH), `$ORIGIN` expanded in the install layout. Non-`$ORIGIN` entries
/// cannot point into the wheel and are skipped.
fn origin_dirs(member: &Member, facts: &ElfFacts) -> Vec<String> {
    let list = if facts.runpath.is_empty() {
        &facts.rpath
    } else {
        &facts.runpath
    };
    let origin = parent(&member.installed);
    list.iter()
        .filter_map(|e| expand_origin(e, origin))
        .filter_map(|p| normalize(&p))
        .collect()
}

/// `entry` with a leading `$ORIGIN` / `${ORIGIN}` replaced by `origin`;
/// `None` for an entry that does not start with one.
pub fn expand_origin(entry: &str, origin: &str) -> Option<String> {
    for token in ["$ORIGIN", "${ORIGIN}"] {
        if let Some(rest) = entry.strip_prefix(token) {
            if rest.is_empty() || rest.starts_with('/') {
                return Some(format!("{origin}{rest}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_expansion() {
        assert_eq!(
            expand_origin("$ORIGIN/../lib", "/x/y").unwrap(),
            "/x/y/../lib"
        );
        assert_eq!(expand_origin("${ORIGIN}", "/x/y").unwrap(), "/x/y");
        assert!(expand_origin("$ORIGINAL", "/x").is_none());
    }
}
