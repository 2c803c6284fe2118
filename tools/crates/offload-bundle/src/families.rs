//! TheRock's amdgpu_family names (`gfx120X-all`, …), as `--//:gfx` takes
//! them. The table lives in `rules/private/gfx_families.bzl`; the JSON
//! embedded here is generated from it, and `//tests/gfx:families_json_test`
//! fails when the two differ.

use std::collections::BTreeMap;

use anyhow::{bail, Result};

const TABLE_JSON: &str = include_str!("gfx_families.json");

#[derive(serde::Deserialize)]
struct Table {
    families: BTreeMap<String, Vec<String>>,
    legacy_families: BTreeMap<String, Vec<String>>,
}

fn table() -> Table {
    serde_json::from_str(TABLE_JSON).expect("the embedded family table is valid JSON")
}

/// One name of a `--gfx` list and the gfx targets it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub name: String,
    pub targets: Vec<String>,
    /// A family (or legacy alias), as opposed to a single target.
    pub family: bool,
}

/// Orders gfx targets as ISA numbers do (gfx90a before gfx1010).
pub fn gfx_sort_key(t: &str) -> (usize, &str) {
    (t.len(), t)
}

fn is_target_name(s: &str) -> bool {
    s.strip_prefix("gfx").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
    })
}

/// Expands a comma list of family names and gfx targets. A single target
/// need not be in the table (generic targets, newer GPUs): the wheel's
/// contents decide whether it exists.
pub fn expand(value: &str) -> Result<Vec<Requested>> {
    let t = table();
    let parts: Vec<&str> = value.split(',').map(str::trim).collect();
    if parts.iter().all(|p| p.is_empty()) {
        bail!(
            "--gfx is empty; give amdgpu families or gfx targets, e.g. --gfx gfx120X-all. \
             Families: {}",
            t.families.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut out = Vec::new();
    for p in parts {
        if p.is_empty() {
            bail!("--gfx {value}: empty entry in the comma-separated list");
        }
        let found = t
            .families
            .get(p)
            .or_else(|| t.legacy_families.get(p))
            .cloned();
        let (targets, family) = match found {
            Some(ts) => (ts, true),
            None if is_target_name(p) => (vec![p.to_string()], false),
            None => {
                let ci = t
                    .families
                    .keys()
                    .chain(t.legacy_families.keys())
                    .find(|k| k.eq_ignore_ascii_case(p));
                let hint = ci
                    .map(|k| format!(" Did you mean '{k}'?"))
                    .unwrap_or_default();
                bail!(
                    "--gfx {value}: unknown amdgpu family or gfx target '{p}'.{hint}\n\
                     Families: {}\nLegacy aliases: {}\nSingle targets are written gfx90a, gfx1201, …",
                    t.families.keys().cloned().collect::<Vec<_>>().join(", "),
                    t.legacy_families
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        };
        out.push(Requested {
            name: p.to_string(),
            targets,
            family,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn bad_names() {
        let e = format!("{:#}", expand("gfx120x-ALL").unwrap_err());
        assert!(e.contains("Did you mean 'gfx120X-all'?"), "{e}");
        assert!(e.contains("Families: dcgpu-all"), "{e}");
        assert!(format!("{:#}", expand(" ").unwrap_err()).contains("is empty"));
        assert!(format!("{:#}", expand("gfx942,,gfx950").unwrap_err()).contains("empty entry"));
    }
}
