//! manylinux policies for x86_64 and aarch64 (PEP 513/571/599/600).
//!
//! The facts live in `manylinux_<arch>.json` as deltas (each policy lists
//! only what it adds to the one before it, or the forbidden symbols it
//! lifts); [`Policies::for_arch`] expands one architecture's into full
//! per-policy sets. A test compares each expansion with auditwheel's policy
//! file so drift is caught.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

pub use elf_read::Arch;

/// The delta table of `arch`.
fn table(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => include_str!("manylinux_x86_64.json"),
        Arch::Aarch64 => include_str!("manylinux_aarch64.json"),
    }
}

#[derive(Deserialize)]
struct DeltaFile {
    arch: String,
    policies: Vec<Delta>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Delta {
    tag: String,
    #[serde(default)]
    legacy_alias: Option<String>,
    #[serde(default)]
    new_symbol_versions: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    new_system_libraries: Vec<String>,
    #[serde(default)]
    forbidden_symbols: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    no_longer_forbidden: BTreeMap<String, Vec<String>>,
}

/// One fully expanded manylinux policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The CPU the policy is for; the suffix of its tag.
    pub arch: Arch,
    /// PEP 600 name without architecture, e.g. `manylinux_2_17`.
    pub name: String,
    /// Legacy name without architecture, e.g. `manylinux2014`.
    pub legacy_alias: Option<String>,
    /// glibc (major, minor) of the policy.
    pub glibc: (u32, u32),
    /// Family (`GLIBC`, `GLIBCXX`, `CXXABI`, `GCC`, `ZLIB`, `LIBATOMIC`) ->
    /// versions an ELF may require. Families not listed are not constrained.
    pub symbol_versions: BTreeMap<String, BTreeSet<String>>,
    /// sonames the policy assumes every system provides.
    pub system_libraries: BTreeSet<String>,
    /// soname -> symbols an ELF must not import from it.
    pub forbidden_symbols: BTreeMap<String, BTreeSet<String>>,
}

impl Policy {
    /// Full platform tag, e.g. `manylinux_2_17_x86_64`.
    pub fn tag(&self) -> String {
        format!("{}_{}", self.name, self.arch)
    }

    /// Whether a symbol version requirement such as `GLIBC_2.17` is allowed.
    /// Versions of families the policy does not know (e.g. `OPENSSL_3.0.0`)
    /// are not its business.
    pub fn allows_version(&self, requirement: &str) -> bool {
        let (family, version) = split_version(requirement);
        match self.symbol_versions.get(family) {
            Some(allowed) => allowed.contains(version),
            None => true,
        }
    }

    /// Newest allowed version of a family, for messages (`GLIBC_2.17`).
    pub fn newest_version(&self, family: &str) -> Option<String> {
        let versions = self.symbol_versions.get(family)?;
        versions
            .iter()
            .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            .max_by(|a, b| compare_versions(a, b))
            .map(|v| format!("{family}_{v}"))
    }
}

/// `GLIBC_2.17` -> (`GLIBC`, `2.17`); `CXXABI_TM_1` -> (`CXXABI`, `TM_1`).
pub fn split_version(requirement: &str) -> (&str, &str) {
    requirement.split_once('_').unwrap_or((requirement, ""))
}

/// Numeric, component-wise comparison of dotted versions (`2.9` < `2.17`).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parse = |s: &str| -> Vec<u64> { s.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    parse(a).cmp(&parse(b))
}

/// One architecture's policies, ordered from the most compatible (oldest
/// glibc) to the least compatible.
#[derive(Debug, Clone)]
pub struct Policies {
    pub arch: Arch,
    pub policies: Vec<Policy>,
}

impl Policies {
    /// The policies of `arch`, expanded from its embedded table.
    pub fn for_arch(arch: Arch) -> Self {
        Self::from_deltas(arch, table(arch))
            .unwrap_or_else(|e| panic!("embedded manylinux_{arch}.json is invalid: {e:#}"))
    }

    fn from_deltas(arch: Arch, text: &str) -> Result<Self> {
        let file: DeltaFile = serde_json::from_str(text).context("parsing the policy table")?;
        if file.arch != arch.as_str() {
            bail!("policy table is for {}, expected {arch}", file.arch);
        }
        let mut policies: Vec<Policy> = Vec::new();
        for delta in file.policies {
            let glibc = parse_manylinux_name(&delta.tag)
                .with_context(|| format!("bad policy tag {:?}", delta.tag))?;
            let mut p = match policies.last() {
                Some(prev) => {
                    if prev.glibc >= glibc {
                        bail!("policy {} is out of order", delta.tag);
                    }
                    prev.clone()
                }
                None => Policy {
                    arch,
                    name: String::new(),
                    legacy_alias: None,
                    glibc,
                    symbol_versions: BTreeMap::new(),
                    system_libraries: BTreeSet::new(),
                    forbidden_symbols: BTreeMap::new(),
                },
            };
            p.name = delta.tag;
            p.legacy_alias = delta.legacy_alias;
            p.glibc = glibc;
            for (family, versions) in delta.new_symbol_versions {
                p.symbol_versions
                    .entry(family)
                    .or_default()
                    .extend(versions);
            }
            p.system_libraries.extend(delta.new_system_libraries);
            for (lib, syms) in delta.forbidden_symbols {
                p.forbidden_symbols.entry(lib).or_default().extend(syms);
            }
            for (lib, syms) in delta.no_longer_forbidden {
                let set = p.forbidden_symbols.entry(lib).or_default();
                for s in &syms {
                    set.remove(s);
                }
            }
            p.forbidden_symbols.retain(|_, s| !s.is_empty());
            policies.push(p);
        }
        Ok(Self { arch, policies })
    }

    /// Look a policy up by any common spelling: `manylinux_2_28`,
    /// `manylinux_2_28_x86_64`, `manylinux2014`, `manylinux2014_x86_64`.
    /// A name with another architecture's suffix is not found.
    pub fn find(&self, name: &str) -> Option<&Policy> {
        let base = name
            .strip_suffix(&format!("_{}", self.arch))
            .unwrap_or(name);
        self.policies
            .iter()
            .find(|p| p.name == base || p.legacy_alias.as_deref() == Some(base))
    }

    /// Index of a policy (0 = most compatible).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        let p = self.find(name)?;
        self.policies.iter().position(|q| q.name == p.name)
    }

    /// Names accepted by [`Policies::find`], for error messages.
    pub fn known_names(&self) -> Vec<String> {
        self.policies.iter().map(|p| p.name.clone()).collect()
    }

    /// The known policies in words, for error messages: `x86_64:
    /// manylinux_2_5, …, manylinux_2_41 (or manylinux1, manylinux2010,
    /// manylinux2014)`.
    pub fn describe(&self) -> String {
        let aliases: Vec<&str> = (self.policies.iter())
            .filter_map(|p| p.legacy_alias.as_deref())
            .collect();
        let mut out = format!("{}: {}", self.arch, self.known_names().join(", "));
        if !aliases.is_empty() {
            out.push_str(&format!(" (or {})", aliases.join(", ")));
        }
        out
    }
}

/// The architecture a policy name's suffix names (`manylinux_2_28_aarch64`,
/// `manylinux2014_x86_64`); `None` without a known suffix.
pub fn arch_of_policy_name(name: &str) -> Option<Arch> {
    Arch::ALL
        .into_iter()
        .find(|a| name.ends_with(&format!("_{a}")))
}

/// `manylinux_2_17` -> (2, 17); `manylinux2014` etc. are not parsed here.
fn parse_manylinux_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("manylinux_")?;
    let (major, minor) = rest.split_once('_')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Result of parsing a platform tag from a wheel name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformTag {
    /// `manylinux_X_Y_ARCH` or a legacy alias; `glibc` is (X, Y).
    Manylinux {
        tag: String,
        glibc: (u32, u32),
        arch: String,
    },
    /// `linux_ARCH`: local build, not accepted by PyPI.
    Linux { tag: String, arch: String },
    /// `any`: pure Python.
    Any,
    /// Anything else (musllinux, macOS, Windows, ...).
    Other(String),
}

/// Classify a single platform tag.
pub fn classify_platform_tag(tag: &str) -> PlatformTag {
    if tag == "any" {
        return PlatformTag::Any;
    }
    const LEGACY: [(&str, (u32, u32)); 3] = [
        ("manylinux1_", (2, 5)),
        ("manylinux2010_", (2, 12)),
        ("manylinux2014_", (2, 17)),
    ];
    for (prefix, glibc) in LEGACY {
        if let Some(arch) = tag.strip_prefix(prefix) {
            return PlatformTag::Manylinux {
                tag: tag.to_string(),
                glibc,
                arch: arch.to_string(),
            };
        }
    }
    if let Some(rest) = tag.strip_prefix("manylinux_") {
        let mut parts = rest.splitn(3, '_');
        if let (Some(major), Some(minor), Some(arch)) = (parts.next(), parts.next(), parts.next()) {
            if let (Ok(major), Ok(minor)) = (major.parse(), minor.parse()) {
                return PlatformTag::Manylinux {
                    tag: tag.to_string(),
                    glibc: (major, minor),
                    arch: arch.to_string(),
                };
            }
        }
    }
    if let Some(arch) = tag.strip_prefix("linux_") {
        return PlatformTag::Linux {
            tag: tag.to_string(),
            arch: arch.to_string(),
        };
    }
    PlatformTag::Other(tag.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_is_monotone_and_ordered() {
        for arch in Arch::ALL {
            let ps = Policies::for_arch(arch);
            assert_eq!(ps.arch, arch);
            for w in ps.policies.windows(2) {
                assert!(w[0].glibc < w[1].glibc);
                assert!(w[0].system_libraries.is_subset(&w[1].system_libraries));
                for (fam, vers) in &w[0].symbol_versions {
                    assert!(vers.is_subset(&w[1].symbol_versions[fam]), "{fam} shrinks");
                }
            }
            assert!(ps.policies.iter().all(|p| p.arch == arch));
            assert!(ps.find("manylinux_2_39").is_some());
            assert!(ps.find("manylinux2014").is_some());
        }
        let ps = Policies::for_arch(Arch::X86_64);
        assert_eq!(ps.policies.first().unwrap().name, "manylinux_2_5");
        let p17 = ps.find("manylinux2014_x86_64").unwrap();
        assert_eq!(p17.name, "manylinux_2_17");
        assert!(p17.allows_version("GLIBC_2.17"));
        assert!(!p17.allows_version("GLIBC_2.18"));
        assert!(p17.allows_version("OPENSSL_3.0.0"));
        assert!(!p17.allows_version("GLIBC_PRIVATE"));
        assert_eq!(p17.newest_version("GLIBC").unwrap(), "GLIBC_2.17");
        assert_eq!(p17.newest_version("GLIBCXX").unwrap(), "GLIBCXX_3.4.19");
        assert!(!p17.system_libraries.contains("libmvec.so.1"));
        assert!(ps
            .find("manylinux_2_24")
            .unwrap()
            .system_libraries
            .contains("libmvec.so.1"));
        assert!(ps.find("manylinux_2_39").is_some());
        assert!(ps.find("musllinux_1_2").is_none());
        // Forbidden symbols are lifted over time, never added back.
        assert!(p17.forbidden_symbols["libz.so.1"].contains("uncompress2"));
        assert!(
            !ps.find("manylinux_2_34").unwrap().forbidden_symbols["libz.so.1"]
                .contains("uncompress2")
        );
        assert!(!ps
            .find("manylinux_2_24")
            .unwrap()
            .forbidden_symbols
            .contains_key("libc.so.6"));
    }

    /// aarch64 starts at manylinux_2_17 (manylinux2014): no manylinux1 or
    /// manylinux2010, and tags carry its own suffix.
    #[test]
    fn aarch64_policies() {
        let ps = Policies::for_arch(Arch::Aarch64);
        let first = ps.policies.first().unwrap();
        assert_eq!(first.name, "manylinux_2_17");
        assert_eq!(first.tag(), "manylinux_2_17_aarch64");
        assert_eq!(
            ps.find("manylinux2014_aarch64").unwrap().name,
            "manylinux_2_17"
        );
        assert!(ps.find("manylinux_2_5").is_none());
        assert!(ps.find("manylinux1").is_none());
        // Another architecture's suffix is not this table's policy.
        assert!(ps.find("manylinux_2_28_x86_64").is_none());
        assert!(Policies::for_arch(Arch::X86_64)
            .find("manylinux_2_28_aarch64")
            .is_none());
        assert!(first.allows_version("GLIBC_2.17"));
        assert!(!first.allows_version("GLIBC_2.28"));
        assert!(ps
            .find("manylinux_2_28")
            .unwrap()
            .allows_version("GLIBC_2.28"));
        assert!(first.system_libraries.contains("libc.so.6"));
        assert_eq!(
            ps.describe(),
            "aarch64: manylinux_2_17, manylinux_2_24, manylinux_2_26, manylinux_2_27, manylinux_2_28, manylinux_2_31, manylinux_2_34, manylinux_2_35, manylinux_2_36, manylinux_2_37, manylinux_2_38, manylinux_2_39, manylinux_2_40, manylinux_2_41 (or manylinux2014)"
        );
        assert_eq!(
            arch_of_policy_name("manylinux2014_aarch64"),
            Some(Arch::Aarch64)
        );
        assert_eq!(
            arch_of_policy_name("manylinux_2_28_x86_64"),
            Some(Arch::X86_64)
        );
        assert_eq!(arch_of_policy_name("manylinux_2_28"), None);
    }

    #[test]
    fn platform_tags() {
        assert_eq!(
            classify_platform_tag("manylinux2014_x86_64"),
            PlatformTag::Manylinux {
                tag: "manylinux2014_x86_64".into(),
                glibc: (2, 17),
                arch: "x86_64".into()
            }
        );
        assert_eq!(
            classify_platform_tag("manylinux_2_28_aarch64"),
            PlatformTag::Manylinux {
                tag: "manylinux_2_28_aarch64".into(),
                glibc: (2, 28),
                arch: "aarch64".into()
            }
        );
        assert!(matches!(
            classify_platform_tag("linux_x86_64"),
            PlatformTag::Linux { .. }
        ));
        assert_eq!(classify_platform_tag("any"), PlatformTag::Any);
        assert!(matches!(
            classify_platform_tag("musllinux_1_2_x86_64"),
            PlatformTag::Other(_)
        ));
        assert_eq!(compare_versions("2.9", "2.17"), std::cmp::Ordering::Less);
    }

    /// auditwheel's `manylinux-policy.json` inside the project venv, if installed.
    fn auditwheel_policy_json() -> Option<std::path::PathBuf> {
        let lib = test_support::venv().join("lib");
        std::fs::read_dir(lib).ok()?.flatten().find_map(|entry| {
            let p = entry
                .path()
                .join("site-packages/auditwheel/policy/manylinux-policy.json");
            p.is_file().then_some(p)
        })
    }

    /// Drift check: each architecture's expanded table must equal
    /// auditwheel's policy file for it (the project venv's; `make setup`
    /// creates it).
    #[test]
    fn tables_match_auditwheel() {
        let Some(path) = auditwheel_policy_json() else {
            panic!(
                "auditwheel's manylinux-policy.json not found in the venv: run `make setup` first"
            );
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(&text).unwrap();
        for arch in Arch::ALL {
            table_matches(&theirs, &Policies::for_arch(arch));
        }
    }

    /// One architecture's table against auditwheel's file (`theirs`).
    fn table_matches(theirs: &serde_json::Value, ours: &Policies) {
        let arch = ours.arch;
        let mut seen = 0;
        for entry in theirs.as_array().unwrap() {
            let name = entry["name"].as_str().unwrap();
            if name == "linux" {
                continue;
            }
            let Some(sv) = entry["symbol_versions"].get(arch.as_str()) else {
                continue;
            };
            let p = ours
                .find(name)
                .unwrap_or_else(|| panic!("auditwheel has {name} for {arch}, our table does not"));
            seen += 1;
            let alias = entry["aliases"]
                .as_array()
                .unwrap()
                .first()
                .map(|a| a.as_str().unwrap().to_string());
            assert_eq!(p.legacy_alias, alias, "{arch} {name}: alias");
            let their_sv: BTreeMap<String, BTreeSet<String>> =
                serde_json::from_value(sv.clone()).unwrap();
            assert_eq!(
                p.symbol_versions, their_sv,
                "{arch} {name}: symbol versions differ"
            );
            let their_libs: BTreeSet<String> =
                serde_json::from_value(entry["lib_whitelist"].clone()).unwrap();
            assert_eq!(
                p.system_libraries, their_libs,
                "{arch} {name}: library whitelist differs"
            );
            let mut their_bl: BTreeMap<String, BTreeSet<String>> =
                serde_json::from_value(entry["blacklist"].clone()).unwrap();
            their_bl.retain(|_, s| !s.is_empty());
            assert_eq!(
                p.forbidden_symbols, their_bl,
                "{arch} {name}: blacklist differs"
            );
        }
        assert_eq!(
            seen,
            ours.policies.len(),
            "our {arch} table has policies auditwheel does not"
        );
    }
}
