//! Planning a repair on the checker's model of the wheel: the new search
//! path of each ELF file, `Root-Is-Purelib`, the platform tag, and the
//! proof: the checker run on the model as repaired must find no error.
//! Nothing is written here.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use manylinux_check::policy::{classify_platform_tag, Arch, PlatformTag, Policies};
use manylinux_check::wheel::{open_wheel, parent, read_open_wheel, Wheel};
use manylinux_check::{check_wheel, wheel_arch, Finding, Options, Report, Severity};
use wheel_format::{canonical_license_expression, dist_info_path, Headers, WheelName};
use wheel_read::{WheelReader, WHOLE_MAX};

use crate::entries::judge_all;
use crate::report::{ElfChange, Entry};

/// What a repair will do, proven on the model.
pub struct Plan {
    pub output_name: String,
    pub elfs: Vec<ElfChange>,
    pub purelib_before: Option<bool>,
    /// `Root-Is-Purelib: false` is to be written.
    pub set_platlib: bool,
    pub tags_before: Vec<String>,
    /// The new `Tag` lines, if the wheel is retagged.
    pub retag: Option<Vec<String>>,
    /// The check of the repaired model (no errors).
    pub check: Report,
    /// What is wrong but left as it is (see [`metadata_findings`]).
    pub findings: Vec<Finding>,
}

impl Plan {
    pub fn changes_anything(&self) -> bool {
        self.set_platlib || self.retag.is_some() || !self.elfs.is_empty()
    }
}

/// Plans the repair of `input`; `plat`: the platform tag to meet (default:
/// the claimed manylinux tag if it holds, else the one the check proves).
/// Returns the open wheel too, for [`crate::apply`] to write from.
pub fn plan(input: &Path, plat: Option<&str>) -> Result<(Plan, WheelReader)> {
    // A typo is reported before the wheel is read.
    if let Some(p) = plat {
        let all: Vec<Policies> = Arch::ALL.into_iter().map(Policies::for_arch).collect();
        if all.iter().all(|ps| ps.find(p).is_none()) {
            bail!("--plat {p}: unknown platform tag; {}", known_tags(&all));
        }
    }
    let mut open = open_wheel(input)?;
    let mut wheel = read_open_wheel(&mut open, WHOLE_MAX)?;
    let metadata_name = dist_info_path(open.dist(), "METADATA");
    let findings = metadata_findings(&metadata_name, &open.read_text(&metadata_name)?);
    let arch = wheel_arch(&wheel, plat)?;
    let policies = Policies::for_arch(arch);
    let plat = match plat {
        Some(p) => Some(policies.find(p).map(|p| p.tag()).with_context(|| {
            format!(
                "--plat {p}: not a platform tag for {arch}, the CPU of {}; {}",
                wheel.file_name,
                known_tags(std::slice::from_ref(&policies))
            )
        })?),
        None => None,
    };
    let input_name = wheel.file_name.clone();
    let tags_before = wheel.claimed_platform_tags();
    let elfs = fix_search_paths(&mut wheel, arch);
    let purelib_before = wheel.root_is_purelib;
    let has_native = wheel.elfs.iter().any(|(_, f)| f.arch == Some(arch));
    let set_platlib = has_native && purelib_before == Some(true);
    if set_platlib {
        wheel.root_is_purelib = Some(false);
    }
    let opts = Options::default();
    let proven = check_wheel(&wheel, &opts)?.platform_tag;
    let target = match (plat, &proven) {
        (Some(p), _) => Some(p),
        (None, Some(p)) if !claim_holds(&tags_before, p, &policies) => Some(p.clone()),
        _ => None,
    };
    let retag = match &target {
        Some(t) if tags_before != [t.clone()] => Some(retag_model(&mut wheel, t)?),
        _ => None,
    };
    let check = check_wheel(&wheel, &opts)?;
    refuse_errors(&input_name, &check, target.as_deref())?;
    let plan = Plan {
        output_name: wheel.file_name.clone(),
        elfs,
        purelib_before,
        set_platlib,
        tags_before,
        retag,
        check,
        findings,
    };
    Ok((plan, open))
}

/// METADATA's `License-Expression` if pip and PyPI would refuse it (an
/// unknown id, bad syntax) or read it otherwise (not in canonical form).
/// Reported, not fixed: the license text is the author's, and a guessed
/// license id is not a repair.
pub fn metadata_findings(member: &str, metadata: &str) -> Vec<Finding> {
    let Some(e) = Headers::parse("METADATA", metadata).get("License-Expression") else {
        return Vec::new();
    };
    let finding = |code, message, hint| Finding {
        severity: Severity::Warning,
        code,
        file: Some(member.to_string()),
        message,
        hint,
    };
    match canonical_license_expression(e) {
        Err(err) => vec![finding(
            "license-expression-invalid",
            format!("License-Expression {err:#}"),
            "pip and PyPI (packaging) refuse this wheel's metadata; rebuild it with a valid \
             SPDX expression (repair leaves METADATA as it is)"
                .to_string(),
        )],
        Ok(c) if c != e => vec![finding(
            "license-expression-not-canonical",
            format!(
                "License-Expression {e:?} is not in canonical form; pip and PyPI read it as {c:?}"
            ),
            format!("rebuild with License-Expression: {c} (repair leaves METADATA as it is)"),
        )],
        Ok(_) => Vec::new(),
    }
}

/// The tags `--plat` takes among `policies`, for messages.
fn known_tags(policies: &[Policies]) -> String {
    let known: Vec<String> = policies.iter().map(Policies::describe).collect();
    format!("known: {}", known.join("; "))
}

/// Judges the search path of every ELF file for `arch` (the wheel's) and
/// sets the model's to the kept entries; returns the files whose search
/// path changes.
fn fix_search_paths(wheel: &mut Wheel, arch: Arch) -> Vec<ElfChange> {
    let installed: Vec<String> = wheel.members.iter().map(|m| m.installed.clone()).collect();
    let installed: BTreeSet<&str> = installed.iter().map(String::as_str).collect();
    let mut changes = Vec::new();
    for (member, facts) in &mut wheel.elfs {
        if facts.arch != Some(arch) {
            continue;
        }
        let runpath = !facts.runpath.is_empty();
        let list = if runpath {
            &facts.runpath
        } else {
            &facts.rpath
        };
        let reasons = judge_all(list, parent(&member.installed), &installed);
        if reasons.iter().all(|r| r.keeps()) {
            continue;
        }
        let entries: Vec<Entry> = list
            .iter()
            .zip(reasons)
            .map(|(e, reason)| Entry {
                value: e.clone(),
                kept: reason.keeps(),
                reason,
            })
            .collect();
        let after: Vec<String> = (entries.iter().filter(|e| e.kept))
            .map(|e| e.value.clone())
            .collect();
        // elf-edit writes one value into both tags when a file has both.
        for l in [&mut facts.runpath, &mut facts.rpath] {
            if !l.is_empty() {
                l.clone_from(&after);
            }
        }
        changes.push(ElfChange {
            path: member.name.clone(),
            kind: if runpath { "DT_RUNPATH" } else { "DT_RPATH" },
            after,
            entries,
            method: None,
        });
    }
    changes
}

/// The claimed tags hold `proven`: one of them is a manylinux tag of
/// `policies`' architecture no more compatible than it.
fn claim_holds(claimed: &[String], proven: &str, policies: &Policies) -> bool {
    let Some(needed) = policies.find(proven).map(|p| p.glibc) else {
        return false;
    };
    claimed.iter().any(|t| match classify_platform_tag(t) {
        PlatformTag::Manylinux { glibc, arch, .. } => {
            arch == policies.arch.as_str() && glibc >= needed
        }
        _ => false,
    })
}

/// Gives the model the platform tag `plat` (python and ABI tags kept);
/// returns the new `Tag` lines' compressed form.
fn retag_model(wheel: &mut Wheel, plat: &str) -> Result<Vec<String>> {
    let name = WheelName::parse(&wheel.file_name)?;
    let tags = vec![format!("{}-{}-{plat}", name.python, name.abi)];
    let file_name = WheelName {
        platform: plat,
        ..name
    }
    .to_string();
    wheel.file_name = file_name;
    wheel.name_platform_tags = Some(vec![plat.to_string()]);
    wheel.metadata_platform_tags = vec![plat.to_string()];
    Ok(tags)
}

/// Refuses a repaired model the checker still finds errors in: what
/// `repair` cannot fix (a library to bundle, symbol versions too new for
/// the tag, a binary under `.data/purelib`, …).
fn refuse_errors(input: &str, check: &Report, target: Option<&str>) -> Result<()> {
    let errors: Vec<String> = (check.findings.iter())
        .filter(|f| f.severity == Severity::Error)
        .map(|f| {
            let file = f.file.as_deref().unwrap_or(input);
            format!(
                "  {}[{}] {file}: {}; fix: {}",
                "error", f.code, f.message, f.hint
            )
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let goal = match target {
        Some(t) => format!("platform tag {t}"),
        None => "its claimed platform tag".into(),
    };
    bail!(
        "{input}: cannot be repaired to {goal}; with its search paths and Root-Is-Purelib \
         fixed, rocm-wheel check still finds:\n{}\nrepair only rewrites search paths, \
         Root-Is-Purelib and the tag; it does not bundle libraries or rebuild code",
        errors.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn license_expression_findings_name_the_fix() {
        let md = |l: &str| {
            format!("Metadata-Version: 2.4\nName: x\nVersion: 1\nLicense-Expression: {l}\n\nbody\n")
        };
        let m = "x-1.dist-info/METADATA";
        assert!(metadata_findings(m, &md("Apache-2.0 OR MIT")).is_empty());
        assert!(metadata_findings(m, "Metadata-Version: 2.1\nName: x\nVersion: 1\n").is_empty());
        let f = metadata_findings(m, &md("apache-2.0 or mit"));
        assert_eq!(f[0].code, "license-expression-not-canonical");
        assert!(
            f[0].hint.contains("License-Expression: Apache-2.0 OR MIT"),
            "{f:?}"
        );
        assert_eq!(f[0].file.as_deref(), Some(m));
        let f = metadata_findings(m, &md("Apache-2.1"));
        assert_eq!(f[0].code, "license-expression-invalid");
        assert!(
            f[0].message.contains("did you mean \"Apache-2.0\""),
            "{f:?}"
        );
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn a_claim_holds_when_it_is_no_more_compatible_than_the_proven_tag() {
        let p = Policies::for_arch(Arch::X86_64);
        let holds = |claimed: &[&str], proven: &str| {
            let claimed: Vec<String> = claimed.iter().map(|s| s.to_string()).collect();
            claim_holds(&claimed, proven, &p)
        };
        let m27 = "manylinux_2_27_x86_64";
        assert!(holds(&[m27], m27));
        assert!(holds(&["manylinux_2_28_x86_64"], "manylinux_2_17_x86_64"));
        assert!(holds(&["manylinux2014_x86_64", m27], m27));
        assert!(!holds(
            &["manylinux_2_17_x86_64", "manylinux2014_x86_64"],
            m27
        ));
        assert!(!holds(&["linux_x86_64"], "manylinux_2_17_x86_64"));
        assert!(!holds(&["any"], "manylinux_2_17_x86_64"));
        assert!(!holds(&["manylinux_2_28_aarch64"], "manylinux_2_17_x86_64"));
        assert!(!holds(&["manylinux_2_28_x86_64"], "linux_x86_64"));
    }
}
