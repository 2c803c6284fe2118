//! The wheel's claims: the platform tags it names, whether they match its
//! ELF files, its `WHEEL` file and where it installs binaries.

use std::collections::BTreeSet;

use crate::policy::{classify_platform_tag, Arch, PlatformTag, Policies};
use crate::report::Severity;
use crate::wheel::Wheel;

use super::resolve::ElfEval;
use super::Findings;

/// The platform tags a wheel claims, read once.
pub(super) struct Claims {
    /// The CPU the wheel is judged for ([`super::wheel_arch`]).
    pub arch: Arch,
    /// As written (file name, else `WHEEL`).
    pub claimed: Vec<String>,
    pub classified: Vec<PlatformTag>,
    /// The most compatible manylinux tag claimed for `arch`, and its glibc.
    pub manylinux: Option<(String, (u32, u32))>,
}

/// What the wheel judged for `arch` claims.
pub(super) fn claims(wheel: &Wheel, arch: Arch) -> Claims {
    let claimed = wheel.claimed_platform_tags();
    let classified: Vec<PlatformTag> = claimed.iter().map(|t| classify_platform_tag(t)).collect();
    let manylinux: Option<(String, (u32, u32))> = classified
        .iter()
        .filter_map(|c| match c {
            PlatformTag::Manylinux {
                tag,
                glibc,
                arch: a,
            } if a == arch.as_str() => Some((tag.clone(), *glibc)),
            _ => None,
        })
        .min_by_key(|(_, g)| *g);
    Claims {
        arch,
        claimed,
        classified,
        manylinux,
    }
}

/// Binaries (`evals`, not empty) in a pure (`any`) wheel or installed as
/// purelib.
pub(super) fn placement_findings(
    wheel: &Wheel,
    evals: &[ElfEval],
    claims: &Claims,
    needed_tag: &Option<String>,
) -> Findings {
    let mut out = Findings::default();
    if claims.classified.contains(&PlatformTag::Any) {
        out.add(
            Severity::Error,
            "pure-wheel-with-binaries",
            None,
            format!(
                "has platform tag 'any' but contains {} {} ELF file(s)",
                evals.len(),
                claims.arch
            ),
            format!(
                "build a platform wheel (tag {})",
                needed_tag.clone().unwrap_or_default()
            ),
        );
    }
    for e in evals {
        let at_root = wheel.root_is_purelib == Some(true) && !e.member.name.contains(".data/");
        if at_root || e.member.in_data_purelib {
            out.add(
                Severity::Error,
                "purelib-with-binaries",
                Some(&e.member.name),
                "is platform code installed as purelib".into(),
                "set Root-Is-Purelib: false in WHEEL (or move it to .data/platlib)".into(),
            );
        }
    }
    out
}

/// The file name against `WHEEL`'s tags.
pub(super) fn name_findings(wheel: &Wheel) -> Findings {
    let mut out = Findings::default();
    if let (Some(name_tags), false) = (
        &wheel.name_platform_tags,
        wheel.metadata_platform_tags.is_empty(),
    ) {
        let a: BTreeSet<&String> = name_tags.iter().collect();
        let b: BTreeSet<&String> = wheel.metadata_platform_tags.iter().collect();
        if a != b {
            out.add(
                Severity::Warning,
                "tag-mismatch",
                None,
                format!(
                    "file name claims {} but WHEEL's Tag lines say {}",
                    name_tags.join("."),
                    wheel.metadata_platform_tags.join(".")
                ),
                "write the same platform tags in the file name and WHEEL".into(),
            );
        }
    }
    if wheel.name_platform_tags.is_none() {
        out.add(
            Severity::Warning,
            "wheel-name",
            None,
            "file name is not a wheel name ({name}-{version}-{python}-{abi}-{platform}.whl); tags read from WHEEL".into(),
            "name the file after its tags".into(),
        );
    }
    out
}

/// Extension modules whose file-name suffix (the EXT_SUFFIX they were built
/// with) disagrees with the ABI tag of the wheel's name: a cp314 module in a
/// cp314t wheel installs where no interpreter imports it.
pub(super) fn abi_findings(wheel: &Wheel) -> Findings {
    let mut out = Findings::default();
    // A name that is no wheel name has its own finding (name_findings).
    let Ok(name) = wheel_format::WheelName::parse(&wheel.file_name) else {
        return out;
    };
    for m in &wheel.members {
        if let Some(problem) = wheel_format::extension_abi_problem(&m.name, name.abi) {
            out.add(
                Severity::Error,
                "extension-abi",
                Some(&m.name),
                problem,
                "build the module for the Python the wheel is tagged for (that interpreter's EXT_SUFFIX), or tag the wheel for the module's ABI".into(),
            );
        }
    }
    out
}

/// For a wheel with binaries: the claimed platform tags against the tag
/// its ELF files need (`wheel_best`: the most compatible policy they all
/// meet).
pub(super) fn tag_findings(
    claims: &Claims,
    wheel_best: Option<usize>,
    needed_tag: &Option<String>,
    policies: &Policies,
) -> Findings {
    let mut out = Findings::default();
    let arch = claims.arch;
    let classified = &claims.classified;
    let claimed_manylinux = &claims.manylinux;
    for c in classified {
        match c {
            PlatformTag::Linux { tag, .. } => out.add(
                Severity::Warning,
                "not-uploadable",
                None,
                format!("claims {tag}, which PyPI does not accept"),
                match &needed_tag {
                    Some(t) if t.starts_with("manylinux") => format!("retag as {t}"),
                    _ => "fix the per-file errors, then retag as manylinux".into(),
                },
            ),
            PlatformTag::Manylinux { tag, arch: a, .. } if a != arch.as_str() => out.add(
                Severity::Error,
                "platform-tag",
                None,
                format!("claims {tag}, but its ELF files are {arch}"),
                format!("tag the wheel {}", needed_tag.clone().unwrap_or_default()),
            ),
            PlatformTag::Other(tag) => out.add(
                Severity::Warning,
                "platform-tag",
                None,
                format!(
                    "claims {tag}, which this checker cannot verify (it knows manylinux {})",
                    super::arch::known_arches()
                ),
                "check it with a tool for that platform".into(),
            ),
            _ => {}
        }
    }
    if let Some((tag, glibc)) = &claimed_manylinux {
        match wheel_best {
            None => out.add(
                Severity::Error,
                "platform-tag",
                None,
                format!("claims {tag}, but its ELF files fit no manylinux policy (linux_{arch}); see the per-file errors"),
                format!("fix the per-file errors (or tag it linux_{arch} for local use only)"),
            ),
            Some(k) if policies.policies[k].glibc > *glibc => out.add(
                Severity::Error,
                "platform-tag",
                None,
                format!(
                    "claims {tag}, but its ELF files need {} (glibc {}.{})",
                    policies.policies[k].tag(),
                    policies.policies[k].glibc.0,
                    policies.policies[k].glibc.1
                ),
                format!("retag as {} or rebuild against an older glibc/toolchain", policies.policies[k].tag()),
            ),
            Some(k) if policies.policies[k].glibc < *glibc => out.add(
                Severity::Info,
                "platform-tag",
                None,
                format!("claims {tag}; its ELF files would also allow {}", policies.policies[k].tag()),
                format!("tag it {} to install on older systems too", policies.policies[k].tag()),
            ),
            _ => {}
        }
    }
    out
}
