//! The CPU a wheel is judged for, and `--policy` read in its terms.
//!
//! The platform tags decide (`manylinux_2_17_aarch64`, `linux_x86_64`);
//! when they name no CPU (`any`, musllinux, …) the host ELF files do, and
//! must agree. A host ELF file of another CPU is then a finding
//! (`foreign-architecture`), not a reason to judge the wheel otherwise.

use std::collections::BTreeMap;

use anyhow::{bail, Result};

use crate::policy::{arch_of_policy_name, classify_platform_tag, Arch, PlatformTag, Policies};
use crate::wheel::Wheel;

/// The CPU `wheel` is for: the one its platform tags name; else the one of
/// its host ELF files; else the one `policy` (`--policy`) names; else
/// x86_64. Errors: a wheel whose tags name only CPUs without known
/// policies while it holds no host code of a known one, or untagged host
/// ELF files of several CPUs.
pub fn wheel_arch(wheel: &Wheel, policy: Option<&str>) -> Result<Arch> {
    let mut named: Vec<Arch> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for tag in wheel.claimed_platform_tags() {
        let arch = match classify_platform_tag(&tag) {
            PlatformTag::Manylinux { arch, .. } | PlatformTag::Linux { arch, .. } => arch,
            _ => continue,
        };
        match Arch::from_name(&arch) {
            Some(a) if !named.contains(&a) => named.push(a),
            Some(_) => {}
            None => unknown.push(arch),
        }
    }
    let elfs = host_elfs(wheel);
    if let [one] = named[..] {
        return Ok(one);
    }
    if named.len() > 1 {
        // Tags for several CPUs: the one the binaries are for is judged,
        // the other tags are findings.
        let elf_arch = (elfs.len() == 1).then(|| *elfs.keys().next().unwrap());
        return Ok(elf_arch.filter(|a| named.contains(a)).unwrap_or(named[0]));
    }
    match elfs.len() {
        1 => return Ok(*elfs.keys().next().unwrap()),
        0 => {}
        _ => {
            let list: Vec<String> = (elfs.iter())
                .map(|(arch, members)| format!("{arch} ({})", members.join(", ")))
                .collect();
            bail!(
                "{} holds host code for several CPUs, {}, and its platform tags do not say which it is for; \
                 a wheel is for one CPU: build one wheel per architecture, tagged for it",
                wheel.file_name,
                list.join(" and ")
            );
        }
    }
    if let (Some(arch), false) = (unknown.first(), wheel.elfs.is_empty()) {
        bail!(
            "{} is a wheel for {arch}; rocm-wheel check knows the manylinux policies of {} only",
            wheel.file_name,
            known_arches()
        );
    }
    Ok(policy.and_then(arch_of_policy_name).unwrap_or(Arch::X86_64))
}

/// Host ELF files by CPU (the known ones), their member names in order.
fn host_elfs(wheel: &Wheel) -> BTreeMap<Arch, Vec<&str>> {
    let mut out: BTreeMap<Arch, Vec<&str>> = BTreeMap::new();
    for (member, facts) in &wheel.elfs {
        if let Some(arch) = facts.arch {
            out.entry(arch).or_default().push(&member.name);
        }
    }
    out
}

/// `x86_64 and aarch64`, for messages.
pub(crate) fn known_arches() -> String {
    let names: Vec<&str> = Arch::ALL.iter().map(|a| a.as_str()).collect();
    names.join(" and ")
}

/// `--policy NAME` names a policy of some architecture; checked before the
/// wheel is read, so a typo costs no reading.
pub(super) fn check_policy_name(name: &str) -> Result<()> {
    let arches: Vec<Arch> = match arch_of_policy_name(name) {
        Some(arch) => vec![arch],
        None => Arch::ALL.to_vec(),
    };
    if arches
        .iter()
        .any(|a| Policies::for_arch(*a).find(name).is_some())
    {
        return Ok(());
    }
    let known: Vec<String> = (arches.iter())
        .map(|a| Policies::for_arch(*a).describe())
        .collect();
    bail!(
        "unknown policy {name:?}; known policies: {}",
        known.join("; ")
    )
}

/// `--policy NAME` among `policies` (the wheel's architecture): its index.
pub(super) fn policy_index(policies: &Policies, name: &str, wheel: &str) -> Result<usize> {
    let arch = policies.arch;
    if let Some(other) = arch_of_policy_name(name).filter(|a| *a != arch) {
        let base = name.strip_suffix(&format!("_{other}")).unwrap_or(name);
        bail!(
            "policy {name:?} is for {other}, but {wheel} is for {arch}; \
             pass --policy {base} (or {base}_{arch}) to judge it in its own architecture"
        );
    }
    match policies.index_of(name) {
        Some(i) => Ok(i),
        None => bail!(
            "unknown policy {name:?} for {arch} ({wheel}); known policies: {}",
            policies.describe()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::{ElfFacts, ElfKind};
    use crate::wheel::Member;

    fn elf(name: &str, arch: Option<Arch>) -> (Member, ElfFacts) {
        let member = Member {
            name: name.into(),
            installed: format!("/prefix/lib/python/site-packages/{name}"),
            in_data_purelib: false,
        };
        let facts = ElfFacts {
            kind: ElfKind::SharedObject,
            machine: arch.map_or("amdgpu".into(), |a| a.to_string()),
            arch,
            is_device_code: arch.is_none(),
            soname: None,
            needed: Vec::new(),
            rpath: Vec::new(),
            runpath: Vec::new(),
            version_requirements: Default::default(),
            undefined_symbols: Default::default(),
            isa_needed: None,
            uses_pyfpe: false,
        };
        (member, facts)
    }

    fn wheel(platform: &str, elfs: Vec<(Member, ElfFacts)>) -> Wheel {
        Wheel {
            file_name: format!("p-1-py3-none-{platform}.whl"),
            name_platform_tags: Some(platform.split('.').map(str::to_string).collect()),
            metadata_platform_tags: Vec::new(),
            root_is_purelib: Some(false),
            members: elfs.iter().map(|(m, _)| m.clone()).collect(),
            elfs,
        }
    }

    #[test]
    fn tags_decide_then_host_elf_files_then_the_policy() {
        let (x86, arm) = (Some(Arch::X86_64), Some(Arch::Aarch64));
        let arch = |platform: &str, elfs: Vec<(Member, ElfFacts)>, policy: Option<&str>| {
            wheel_arch(&wheel(platform, elfs), policy).map_err(|e| e.to_string())
        };
        assert_eq!(
            arch("manylinux_2_17_aarch64", vec![], None),
            Ok(Arch::Aarch64)
        );
        assert_eq!(arch("linux_aarch64", vec![], None), Ok(Arch::Aarch64));
        assert_eq!(
            arch("manylinux2014_x86_64", vec![elf("a.so", arm)], None),
            Ok(Arch::X86_64),
            "the tag decides; the file is foreign"
        );
        assert_eq!(arch("any", vec![elf("a.so", arm)], None), Ok(Arch::Aarch64));
        assert_eq!(
            arch("any", vec![elf("k.co", None), elf("a.so", arm)], None),
            Ok(Arch::Aarch64),
            "device code says nothing"
        );
        assert_eq!(
            arch(
                "manylinux_2_17_x86_64.manylinux_2_17_aarch64",
                vec![elf("a.so", arm)],
                None
            ),
            Ok(Arch::Aarch64)
        );
        assert_eq!(
            arch("manylinux_2_17_ppc64le", vec![elf("a.so", x86)], None),
            Ok(Arch::X86_64)
        );
        assert_eq!(
            arch("any", vec![], Some("manylinux_2_28_aarch64")),
            Ok(Arch::Aarch64)
        );
        assert_eq!(
            arch("any", vec![], Some("manylinux_2_28")),
            Ok(Arch::X86_64)
        );
        let mixed = arch("any", vec![elf("a.so", arm), elf("b.so", x86)], None).unwrap_err();
        assert!(
            mixed.contains("x86_64 (b.so) and aarch64 (a.so)")
                && mixed.contains("one wheel per architecture"),
            "{mixed}"
        );
        let ppc = arch("manylinux_2_17_ppc64le", vec![elf("k.co", None)], None).unwrap_err();
        assert!(
            ppc.contains("for ppc64le") && ppc.contains("x86_64 and aarch64 only"),
            "{ppc}"
        );
    }

    #[test]
    fn policy_names_in_the_wheels_architecture() {
        let arm = Policies::for_arch(Arch::Aarch64);
        assert_eq!(policy_index(&arm, "manylinux_2_17", "w").unwrap(), 0);
        assert_eq!(policy_index(&arm, "manylinux2014_aarch64", "w").unwrap(), 0);
        let e = policy_index(&arm, "manylinux_2_28_x86_64", "w.whl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is for x86_64, but w.whl is for aarch64")
                && e.contains("--policy manylinux_2_28 "),
            "{e}"
        );
        let e = policy_index(&arm, "manylinux1", "w.whl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("for aarch64") && e.contains("aarch64: manylinux_2_17, manylinux_2_24"),
            "{e}"
        );
        assert!(!e.contains("manylinux_2_5"), "{e}");
        check_policy_name("manylinux1").unwrap();
        check_policy_name("manylinux_2_17_aarch64").unwrap();
        let e = check_policy_name("manylinux_2_5_aarch64")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("aarch64: manylinux_2_17") && !e.contains("x86_64:"),
            "{e}"
        );
        let e = check_policy_name("manylinux_9_99").unwrap_err().to_string();
        assert!(
            e.contains("x86_64: manylinux_2_5") && e.contains("; aarch64: manylinux_2_17"),
            "{e}"
        );
    }
}
