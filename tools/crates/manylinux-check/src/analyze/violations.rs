//! What keeps an ELF file from meeting a policy, and the findings that
//! explain it (with how to fix each).

use std::collections::BTreeMap;

use crate::elf::is_dynamic_loader;
use crate::policy::{compare_versions, split_version, Policies, Policy};
use crate::report::Severity;
use crate::wheel::{parent, Wheel};

use super::resolve::{ElfEval, Resolution};
use super::Findings;

/// The policy the ELF files are judged against, and how messages name it.
pub(super) struct Against<'a> {
    pub policy: &'a Policy,
    pub label: String,
}

/// Findings for one host ELF checked against `against`: its violations,
/// then the allowlisted libraries it loads from the system.
pub(super) fn policy_findings(
    e: &ElfEval,
    against: &Against,
    policies: &Policies,
    wheel: &Wheel,
) -> Findings {
    let mut out = Findings::default();
    let file = Some(e.member.name.as_str());
    let policy = against.policy;
    for v in violations(e, policy) {
        // Every violation keeps the ELF (and so the wheel) off the policy.
        let (code, message, hint) = match v {
            Violation::Versions { family, versions } => {
                symbol_version_finding(e, &family, &versions, against, policies)
            }
            Violation::NotWhitelisted(soname) => {
                missing_library_finding(e, &soname, policy, policies, wheel)
            }
            Violation::Forbidden { library, symbols } => (
                "forbidden-symbol",
                format!(
                    "imports {} from {library}, which {} forbids (not provided by every distribution's {library})",
                    symbols.join(", "),
                    policy.tag()
                ),
                "bundle the library under a private name (auditwheel repair) or stop using these symbols".into(),
            ),
            Violation::Isa(level) => (
                "isa-extension",
                format!("is marked as needing {level} (GNU property note); manylinux assumes baseline x86_64"),
                "build for baseline x86-64 (drop -march=x86-64-v2+ / -mneeds) or dispatch at run time".into(),
            ),
            Violation::PyFpe => (
                "pyfpe",
                "imports PyFPE_jbuf: built against a Python configured --with-fpectl".into(),
                "rebuild against a standard CPython".into(),
            ),
        };
        out.add(Severity::Error, code, file, message, hint);
    }
    let allowed_here: Vec<&str> = e
        .resolutions
        .iter()
        .filter(|(_, r)| *r == Resolution::AllowedExternal)
        .map(|(s, _)| s.as_str())
        .collect();
    if !allowed_here.is_empty() {
        out.add(
            Severity::Info,
            "allowed-external",
            file,
            format!(
                "loads {} from the system (allowlisted, not bundled)",
                allowed_here.join(", ")
            ),
            "make sure the runtime (e.g. ROCm) that provides them is documented as a requirement"
                .into(),
        );
    }
    out
}

/// Code, message and hint of a finding.
type Explained = (&'static str, String, String);

/// Symbol versions of one family (`GLIBC`, `GLIBCXX`, ...) newer than the
/// policy allows.
fn symbol_version_finding(
    e: &ElfEval,
    family: &str,
    versions: &[(String, String)],
    against: &Against,
    policies: &Policies,
) -> Explained {
    let newest = &policies.policies[policies.policies.len() - 1];
    let newest_allowed = against
        .policy
        .newest_version(family)
        .map(|v| format!("at most {v}"))
        .unwrap_or_else(|| "none".into());
    let private = versions.iter().any(|(v, _)| {
        !split_version(v).1.starts_with(|c: char| c.is_ascii_digit()) && !newest.allows_version(v)
    });
    let list = versions
        .iter()
        .map(|(v, lib)| format!("{v} ({lib})"))
        .collect::<Vec<_>>()
        .join(", ");
    let hint = if private {
        "it links against private or unknown symbol versions; rebuild without them (they are never manylinux-compatible)".to_string()
    } else {
        match e.best.map(|k| policies.policies[k].tag()) {
            Some(t) => format!(
                "build in an older manylinux image or against an older sysroot, or claim {t}"
            ),
            None => "build in an older manylinux image or against an older sysroot".into(),
        }
    };
    (
        "symbol-version",
        format!(
            "requires {list}, but {} allows {newest_allowed}",
            against.label
        ),
        hint,
    )
}

/// A library that neither the wheel nor the policy's system provides:
/// in the wheel but out of reach, newer systems only, or not known at all.
fn missing_library_finding(
    e: &ElfEval,
    soname: &str,
    policy: &Policy,
    policies: &Policies,
    wheel: &Wheel,
) -> Explained {
    let from = policies
        .policies
        .iter()
        .find(|p| p.system_libraries.contains(soname));
    let same_name = wheel
        .members
        .iter()
        .find(|m| m.installed.rsplit('/').next() == Some(soname));
    if let Some(m) = same_name {
        let rel = relative_dir(parent(&e.member.installed), parent(&m.installed));
        (
            "unreachable-library",
            format!(
                "needs {soname}; the wheel has {} but this ELF's search path does not reach it",
                m.name
            ),
            format!("add $ORIGIN{rel} to its RUNPATH (rocm-wheel rpath / patchelf --set-rpath)"),
        )
    } else if let Some(p) = from {
        (
            "external-library",
            format!(
                "needs {soname}, which {} systems provide only from {} on; it is not bundled",
                policy.tag(),
                p.tag()
            ),
            format!("bundle {soname} in the wheel, or claim {}", p.tag()),
        )
    } else {
        (
            "external-library",
            format!("needs {soname}: not bundled in the wheel, not a manylinux system library, not in the external allowlist"),
            format!("bundle it (auditwheel repair, or copy it into the wheel and add a $ORIGIN RUNPATH), or if the runtime provides it pass --allow-external '{}'", suggest_pattern(soname)),
        )
    }
}

pub(super) enum Violation {
    /// Family -> [(version, library)] not allowed.
    Versions {
        family: String,
        versions: Vec<(String, String)>,
    },
    NotWhitelisted(String),
    Forbidden {
        library: String,
        symbols: Vec<String>,
    },
    Isa(String),
    PyFpe,
}

/// Everything that keeps `e` from satisfying `p`.
pub(super) fn violations(e: &ElfEval, p: &Policy) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut by_family: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (lib, versions) in &e.facts.version_requirements {
        if is_dynamic_loader(lib) {
            continue;
        }
        for v in versions {
            if !p.allows_version(v) {
                let family = split_version(v).0.to_string();
                by_family
                    .entry(family)
                    .or_default()
                    .push((v.clone(), lib.clone()));
            }
        }
    }
    for (family, mut versions) in by_family {
        versions.sort_by(|a, b| compare_versions(split_version(&b.0).1, split_version(&a.0).1));
        out.push(Violation::Versions { family, versions });
    }
    for (soname, r) in &e.resolutions {
        if *r != Resolution::System {
            continue;
        }
        if !p.system_libraries.contains(soname) {
            out.push(Violation::NotWhitelisted(soname.clone()));
            continue;
        }
        if let Some(forbidden) = p.forbidden_symbols.get(soname) {
            let hits: Vec<String> = forbidden
                .intersection(&e.facts.undefined_symbols)
                .cloned()
                .collect();
            if !hits.is_empty() {
                out.push(Violation::Forbidden {
                    library: soname.clone(),
                    symbols: hits,
                });
            }
        }
    }
    if let Some(level) = &e.facts.isa_needed {
        out.push(Violation::Isa(level.clone()));
    }
    if e.facts.uses_pyfpe {
        out.push(Violation::PyFpe);
    }
    out
}

/// `/a/b` -> `/a/c/d` gives `/../c/d` (for `$ORIGIN` + result).
fn relative_dir(from: &str, to: &str) -> String {
    let f: Vec<&str> = from.split('/').filter(|c| !c.is_empty()).collect();
    let t: Vec<&str> = to.split('/').filter(|c| !c.is_empty()).collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; f.len() - common];
    parts.extend(&t[common..]);
    parts.iter().map(|p| format!("/{p}")).collect()
}

/// `libfoo.so.1.2` -> `libfoo.so.*`.
fn suggest_pattern(soname: &str) -> String {
    match soname.find(".so") {
        Some(i) => format!("{}.so.*", &soname[..i]),
        None => soname.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(relative_dir("/a/b", "/a/c/d"), "/../c/d");
        assert_eq!(relative_dir("/a/b", "/a/b"), "");
        assert_eq!(suggest_pattern("libfoo.so.1.2"), "libfoo.so.*");
    }
}
