//! TheRock's amdgpu_family names (`gfx120X-all`, …), as `--//:gfx` takes
//! them, and the generic targets (code-object version 6: one code object
//! for several GPUs, e.g. `gfx12-generic` for gfx1200 and gfx1201). The
//! table lives in `rules/private/data/gfx_families.bzl`; the JSON embedded here
//! is generated from it, and `//tests/outputs/gfx:families_json_test` fails when the
//! two differ.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Result};

const TABLE_JSON: &str = include_str!("gfx_families.json");

#[derive(serde::Deserialize)]
struct Bundle {
    members: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Table {
    /// rocm-bootstrap's family and sub-family bundles (`gfx12`, `gfx12_0`).
    bundles: BTreeMap<String, Bundle>,
    families: BTreeMap<String, Vec<String>>,
    /// Generic target -> the targets its code object runs on.
    generic_targets: BTreeMap<String, Vec<String>>,
    legacy_families: BTreeMap<String, Vec<String>>,
    /// Targets no family names any more, still accepted on their own.
    retired_targets: Vec<String>,
}

fn table() -> &'static Table {
    // Parsed once: thinning asks for coverage once per code object.
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(TABLE_JSON).expect("the embedded family table is valid JSON")
    })
}

/// One name of a `--gfx` list and the gfx targets it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub name: String,
    /// The targets of a family; a single target (specific or generic) is
    /// itself. A generic name stands for its own code objects, not for the
    /// targets it covers: `gfx12-generic` asks for the gfx12-generic code
    /// object, which [`generic_covers`] says runs on gfx1200 and gfx1201.
    pub targets: Vec<String>,
    /// A family (or legacy alias), as opposed to a single target.
    pub family: bool,
}

/// Whether a processor or target id names a generic target (`gfx12-generic`,
/// `gfx9-4-generic:xnack-`), in the table or not.
pub fn is_generic(target: &str) -> bool {
    processor(target).ends_with("-generic")
}

/// The processor of a target id: `gfx942` of `gfx942:xnack+`.
pub fn processor(target_id: &str) -> &str {
    target_id.split(':').next().unwrap_or_default()
}

/// The gfx targets whose GPUs run a generic target's code object, in ISA
/// order (`gfx12-generic` -> gfx1200, gfx1201). `target` may carry
/// features (`gfx9-4-generic:sramecc+`); they do not change coverage.
/// `None` for specific targets and for generic targets the table lacks.
pub fn generic_covers(target: &str) -> Option<&'static [String]> {
    table()
        .generic_targets
        .get(processor(target))
        .map(Vec::as_slice)
}

/// Whether a code object for processor `p` serves `target`: it is that
/// target's own, or a generic one covering it.
pub fn serves(p: &str, target: &str) -> bool {
    p == target || generic_covers(p).is_some_and(|c| c.iter().any(|t| t == target))
}

/// Whether a code object for processor `p` stays when thinning to the
/// `requested` targets: it serves one of them. A specific code object for
/// the same target stays too; the runtime prefers it.
pub fn keeps(requested: &BTreeSet<String>, p: &str) -> bool {
    requested.iter().any(|t| serves(p, t))
}

/// Whether the processors `present` hold code that runs on `target`.
pub fn has_code_for(present: &BTreeSet<String>, target: &str) -> bool {
    present.iter().any(|p| serves(p, target))
}

/// `gfx12-generic (gfx1200, gfx1201)` for a generic target the table
/// knows; any other target id as it is.
pub fn describe_target(target: &str) -> String {
    match generic_covers(target) {
        Some(covers) => format!("{target} ({})", covers.join(", ")),
        None => target.to_string(),
    }
}

/// Orders gfx targets as ISA numbers do (gfx90a before gfx1010), generic
/// targets after all specific ones, by length then name (the Starlark table
/// orders generic targets by its own ISA order instead: display only).
pub fn gfx_sort_key(t: &str) -> (bool, usize, &str) {
    (is_generic(t), t.len(), t)
}

/// Every target the table names (family members, retired targets, generic
/// targets), sorted by [`gfx_sort_key`]: the Starlark side's `GFX_TARGETS`
/// as a set.
pub fn known_targets() -> Vec<&'static str> {
    let t = table();
    let mut all: BTreeSet<&str> = t.retired_targets.iter().map(String::as_str).collect();
    all.extend(t.generic_targets.keys().map(String::as_str));
    for members in t.families.values().chain(t.legacy_families.values()) {
        all.extend(members.iter().map(String::as_str));
    }
    for b in t.bundles.values() {
        all.extend(b.members.iter().map(String::as_str));
    }
    let mut all: Vec<&str> = all.into_iter().collect();
    all.sort_by_key(|t| gfx_sort_key(t));
    all
}

/// Every target of rocm-bootstrap's bundles (its target registry; each is
/// its own package owner but `gfx1250-strict`, owned by gfx1250), in
/// [`gfx_sort_key`] order: what its variant provider's `amd :: gfx_arch`
/// values are made of.
pub fn bootstrap_targets() -> Vec<&'static str> {
    let members: BTreeSet<&str> = (table().bundles.values())
        .flat_map(|b| b.members.iter().map(String::as_str))
        .collect();
    let mut all: Vec<&str> = members.into_iter().collect();
    all.sort_by_key(|t| gfx_sort_key(t));
    all
}

/// The targets of one `--gfx` name and whether it is a family; `None` for
/// a name the table does not know.
fn lookup(t: &Table, name: &str) -> Option<(Vec<String>, bool)> {
    if let Some(ts) = t.families.get(name).or_else(|| t.legacy_families.get(name)) {
        return Some((ts.clone(), true));
    }
    if let Some(b) = t.bundles.get(name) {
        return Some((b.members.clone(), true));
    }
    known_targets()
        .contains(&name)
        .then(|| (vec![name.to_string()], false))
}

/// Expands a comma list of family names, gfx targets and generic targets,
/// as `--//:gfx` does: every name must be in the table (a target-shaped
/// typo gets a hint instead of a "no code for" later), and the cases of
/// `tests/outputs/gfx/expand_cases.bzl` hold for both.
pub fn expand(value: &str) -> Result<Vec<Requested>> {
    let t = table();
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    if parts.iter().all(|p| p.is_empty()) {
        bail!(
            "--gfx is empty; give amdgpu families or gfx targets (gfx1201, or generic ones \
             such as gfx12-generic), e.g. --gfx gfx120X-all. Families: {}",
            t.families.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut out = Vec::new();
    for p in parts {
        if p.is_empty() {
            bail!("--gfx {value}: empty entry in the comma-separated list");
        }
        let (targets, family) = lookup(t, p).ok_or_else(|| unknown_name(t, value, p))?;
        out.push(Requested {
            name: p.to_string(),
            targets,
            family,
        });
    }
    Ok(out)
}

/// Case-insensitive Levenshtein distance (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    let b = b.as_bytes();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j + 1] + 1)
                .min(cur[j] + 1)
                .min(prev[j] + usize::from(ca != cb));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The accepted name closest to `name` within a small distance (a
/// case-insensitive match first), as the Starlark side's `did_you_mean`.
fn did_you_mean<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut all: Vec<&str> = candidates.collect();
    all.sort_unstable();
    if let Some(c) = all.iter().find(|c| c.eq_ignore_ascii_case(name)) {
        return Some(c);
    }
    let best = all.into_iter().min_by_key(|c| edit_distance(name, c))?;
    (edit_distance(name, best) <= 2.max(name.len() / 3)).then_some(best)
}

/// The error for a `--gfx` entry that is no family or target: the closest
/// accepted name if one is close, and every accepted name.
fn unknown_name(t: &Table, value: &str, p: &str) -> anyhow::Error {
    let names = t
        .families
        .keys()
        .chain(t.legacy_families.keys())
        .chain(t.bundles.keys())
        .map(String::as_str)
        .chain(known_targets());
    let hint = did_you_mean(p, names)
        .map(|k| format!(" Did you mean '{k}'?"))
        .unwrap_or_default();
    let (generic, specific): (Vec<&str>, Vec<&str>) =
        known_targets().into_iter().partition(|t| is_generic(t));
    let join = |m: &BTreeMap<String, Vec<String>>| m.keys().cloned().collect::<Vec<_>>().join(", ");
    anyhow!(
        "--gfx {value}: unknown amdgpu family or gfx target '{p}'.{hint}\n\
         Valid families: {}\nLegacy aliases: {}\nrocm-bootstrap bundles: {}\nSingle targets: {}\n\
         Generic targets (one code object for several GPUs): {}",
        join(&t.families),
        join(&t.legacy_families),
        t.bundles.keys().cloned().collect::<Vec<_>>().join(", "),
        specific.join(", "),
        generic.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_code_objects_stay_for_the_targets_they_cover() {
        let req: BTreeSet<String> = ["gfx1201", "gfx90a"].map(String::from).into();
        assert!(keeps(&req, "gfx1201"));
        assert!(keeps(&req, "gfx12-generic"));
        assert!(!keeps(&req, "gfx1200"));
        assert!(!keeps(&req, "gfx9-4-generic"));
        assert!(!keeps(&req, "gfx12-5-generic"));
        // Asked for by name.
        let req: BTreeSet<String> = ["gfx12-generic".to_string()].into();
        assert!(keeps(&req, "gfx12-generic"));
        assert!(!keeps(&req, "gfx1200"));

        let present: BTreeSet<String> = ["gfx942", "gfx12-generic"].map(String::from).into();
        assert!(has_code_for(&present, "gfx1200"));
        assert!(has_code_for(&present, "gfx12-generic"));
        assert!(has_code_for(&present, "gfx942"));
        assert!(!has_code_for(&present, "gfx950"));
        assert!(!has_code_for(&present, "gfx1100"));
    }

    #[test]
    fn rocm_bootstrap_bundles_expand_before_the_target_shape() {
        // gfx12 is rocm-bootstrap's family, not a target named gfx12.
        let r = expand("gfx12_0,gfx12,gfx115x").unwrap();
        assert_eq!(r[0].targets, ["gfx1200", "gfx1201"]);
        assert!(r[1].family && r[1].targets.contains(&"gfx1251".to_string()));
        assert_eq!(r[2].targets, ["gfx1150", "gfx1151", "gfx1152", "gfx1153"]);
    }

    #[test]
    fn families_and_targets() {
        let r = expand("gfx120X-all, gfx90a").unwrap();
        assert_eq!(r[0].targets, ["gfx1200", "gfx1201"]);
        assert!(r[0].family);
        assert_eq!(r[1].targets, ["gfx90a"]);
        assert!(!r[1].family);
        assert_eq!(
            expand("gfx90X-dcgpu").unwrap()[0].targets,
            ["gfx906", "gfx908", "gfx90a"]
        );
    }

    #[test]
    fn generic_names_are_single_targets() {
        let r = expand("gfx12-generic,gfx9-4-generic").unwrap();
        let got: Vec<(&str, &[String], bool)> = r
            .iter()
            .map(|r| (r.name.as_str(), r.targets.as_slice(), r.family))
            .collect();
        assert_eq!(
            got,
            [
                ("gfx12-generic", &["gfx12-generic".to_string()][..], false),
                ("gfx9-4-generic", &["gfx9-4-generic".to_string()][..], false),
            ]
        );
    }

    #[test]
    fn coverage_of_generic_targets() {
        assert_eq!(
            generic_covers("gfx12-generic").unwrap(),
            ["gfx1200", "gfx1201"]
        );
        assert_eq!(
            generic_covers("gfx9-4-generic:sramecc+:xnack-").unwrap(),
            ["gfx942", "gfx950"]
        );
        assert_eq!(generic_covers("gfx11-generic").unwrap().len(), 8);
        assert_eq!(generic_covers("gfx1200"), None);
        assert_eq!(generic_covers("gfx12-5-generic"), None);
        assert_eq!(generic_covers("gfx120X-all"), None);
        // Every generic target covers at least one target.
        for g in known_targets().into_iter().filter(|t| is_generic(t)) {
            assert!(!generic_covers(g).unwrap().is_empty(), "{g}");
        }
        assert_eq!(
            describe_target("gfx12-generic"),
            "gfx12-generic (gfx1200, gfx1201)"
        );
        assert_eq!(describe_target("gfx90a:xnack+"), "gfx90a:xnack+");
    }

    #[test]
    fn generic_targets_sort_last() {
        let mut ts = vec![
            "gfx12-generic",
            "gfx1201",
            "gfx9-generic",
            "gfx90a",
            "gfx942",
        ];
        ts.sort_by_key(|t| gfx_sort_key(t));
        assert_eq!(
            ts,
            [
                "gfx90a",
                "gfx942",
                "gfx1201",
                "gfx9-generic",
                "gfx12-generic"
            ]
        );
        let known = known_targets();
        assert!(known.contains(&"gfx1031"), "retired targets are known");
        let first_generic = known.iter().position(|t| is_generic(t)).unwrap();
        assert!(known[first_generic..].iter().all(|t| is_generic(t)));
        assert_eq!(known[first_generic], "gfx9-generic");
    }

    #[test]
    fn rocm_bootstrap_targets() {
        let v = bootstrap_targets();
        assert!(v.contains(&"gfx1201") && v.contains(&"gfx90a") && v.contains(&"gfx1250-strict"));
        assert_eq!(v.len(), 34, "{v:?}");
        assert_eq!(v[0], "gfx900");
    }

    #[test]
    fn bad_names() {
        // The shared cases (tests/expand_cases.rs) cover the messages; here
        // what they cannot say: the generic list, and no hint when nothing is close.
        let e = format!("{:#}", expand("gfx120x-ALL").unwrap_err());
        assert!(
            e.contains("Generic targets (one code object for several GPUs): gfx9-generic, "),
            "{e}"
        );
        let e = format!("{:#}", expand("radeon").unwrap_err());
        assert!(!e.contains("Did you mean"), "{e}");
    }
}
