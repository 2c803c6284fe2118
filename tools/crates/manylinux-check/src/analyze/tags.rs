//! The wheel's claims: the platform tags it names, whether they match its
//! ELF files, its `WHEEL` file and where it installs binaries.

use std::collections::BTreeSet;

use anyhow::{bail, Result};

use crate::policy::{classify_platform_tag, PlatformTag, Policies, ARCH};
use crate::report::Severity;
use crate::wheel::Wheel;

use super::resolve::ElfEval;
use super::Findings;

/// The platform tags a wheel claims, read once.
pub(super) struct Claims {
    /// As written (file name, else `WHEEL`).
    pub claimed: Vec<String>,
    pub classified: Vec<PlatformTag>,
    /// The most compatible x86_64 manylinux tag claimed, and its glibc.
    pub manylinux: Option<(String, (u32, u32))>,
}

/// What the wheel claims. A wheel for another CPU (every tag for another
/// architecture, ELF files but no x86_64 one) cannot be judged with
/// x86_64 policies: that is an error instead of a report flagging every
/// file as foreign.
pub(super) fn claims(wheel: &Wheel, evals: &[ElfEval]) -> Result<Claims> {
    let claimed = wheel.claimed_platform_tags();
    let classified: Vec<PlatformTag> = claimed.iter().map(|t| classify_platform_tag(t)).collect();
    let manylinux: Option<(String, (u32, u32))> = classified
        .iter()
        .filter_map(|c| match c {
            PlatformTag::Manylinux { tag, glibc, arch } if arch == ARCH => {
                Some((tag.clone(), *glibc))
            }
            _ => None,
        })
        .min_by_key(|(_, g)| *g);
    let other_arch: Vec<&str> = classified
        .iter()
        .filter_map(|c| match c {
            PlatformTag::Manylinux { arch, .. } | PlatformTag::Linux { arch, .. }
                if arch != ARCH =>
            {
                Some(arch.as_str())
            }
            _ => None,
        })
        .collect();
    if evals.is_empty()
        && !wheel.elfs.is_empty()
        && !other_arch.is_empty()
        && other_arch.len() == classified.len()
    {
        bail!(
            "{} is a wheel for {}; rocm-wheel check knows the {ARCH} manylinux policies only",
            wheel.file_name,
            other_arch[0]
        );
    }
    Ok(Claims {
        claimed,
        classified,
        manylinux,
    })
}

/// Binaries (`evals`, not empty) in a pure (`any`) wheel or installed as
/// purelib.
pub(super) fn placement_findings(
    wheel: &Wheel,
    evals: &[ElfEval],
    classified: &[PlatformTag],
    needed_tag: &Option<String>,
) -> Findings {
    let mut out = Findings::default();
    if classified.contains(&PlatformTag::Any) {
        out.add(
            Severity::Error,
            "pure-wheel-with-binaries",
            None,
            format!(
                "has platform tag 'any' but contains {} x86_64 ELF file(s)",
                evals.len()
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
            PlatformTag::Manylinux { tag, arch, .. } if arch != ARCH => out.add(
                Severity::Error,
                "platform-tag",
                None,
                format!("claims {tag}, but its ELF files are {ARCH}"),
                format!("tag the wheel {}", needed_tag.clone().unwrap_or_default()),
            ),
            PlatformTag::Other(tag) => out.add(
                Severity::Warning,
                "platform-tag",
                None,
                format!(
                    "claims {tag}, which this checker cannot verify (it knows manylinux {ARCH})"
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
                format!("claims {tag}, but its ELF files fit no manylinux policy (linux_{ARCH}); see the per-file errors"),
                "fix the per-file errors (or tag it linux_x86_64 for local use only)".into(),
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
