//! Where each DT_NEEDED library of a wheel's ELF files would be found once
//! the wheel is installed into a given environment (`rocm-wheel check
//! --resolve`): through the file's RUNPATH (or RPATH), `$ORIGIN` taken in
//! the environment's site-packages and absolute entries under its root,
//! among the wheel's own files, or on the system (the manylinux policy's
//! libraries). What the dynamic linker's default directories hold is not
//! looked at: a ROCm library found only there would not be found where the
//! wheel is meant to run. ELF files for another CPU than the environment's
//! are reported as such: its loader would not load them at all.

use std::path::PathBuf;

use anyhow::{anyhow, Result};

use crate::elf::is_dynamic_loader;
use crate::expand_origin;
use crate::policy::{Arch, Policies};
use crate::wheel::{normalize, Wheel, SITE_PACKAGES};

/// The environment the wheel is resolved against.
pub struct Environment {
    /// The site-packages directory the wheel is (or would be) installed in.
    pub site_packages: PathBuf,
    /// Prefix of absolute RUNPATH entries (`/`, or a chroot / container root).
    pub root: PathBuf,
    /// The environment's CPU: whose ELF files load there, and whose
    /// policies' system libraries it provides ([`system_arch`] for the
    /// running system).
    pub arch: Arch,
}

/// The running system's CPU: the one this program was built for.
pub fn system_arch() -> Result<Arch> {
    Arch::from_name(std::env::consts::ARCH).ok_or_else(|| {
        anyhow!(
            "this system is {}, a CPU without manylinux policies here (known: {}); \
             resolve the wheel on an x86_64 or aarch64 system",
            std::env::consts::ARCH,
            crate::analyze::known_arches()
        )
    })
}

/// How one needed library is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// In the environment, at this path, through this RUNPATH entry.
    Path { path: PathBuf, entry: String },
    /// Installed by the wheel itself (its path relative to site-packages).
    InWheel { path: String },
    /// A library every manylinux system provides (glibc, libstdc++, …).
    System,
    /// Nowhere: the RUNPATH entries searched.
    Missing { searched: Vec<String> },
}

/// One ELF member's needed libraries, in DT_NEEDED order.
#[derive(Debug)]
pub struct Resolution {
    /// The member's path in the wheel.
    pub member: String,
    pub needed: Vec<(String, Found)>,
    /// The machine of a host ELF file for another CPU than the
    /// environment's (its `needed` is then empty: nothing would load it).
    pub foreign: Option<String>,
}

/// Resolves every host ELF member's DT_NEEDED against `env` (device code
/// needs nothing from the system).
pub fn resolve(wheel: &Wheel, env: &Environment) -> Vec<Resolution> {
    let policies = Policies::for_arch(env.arch);
    let system = |name: &str| {
        is_dynamic_loader(name)
            || policies
                .policies
                .iter()
                .any(|p| p.system_libraries.contains(name))
    };
    let installed = wheel.installed_paths();
    wheel
        .elfs
        .iter()
        .filter(|(_, facts)| !facts.is_device_code)
        .map(|(member, facts)| {
            if facts.arch != Some(env.arch) {
                return Resolution {
                    member: member.name.clone(),
                    needed: Vec::new(),
                    foreign: Some(facts.machine.clone()),
                };
            }
            let origin = crate::wheel::parent(&member.installed);
            let entries = if facts.runpath.is_empty() {
                &facts.rpath
            } else {
                &facts.runpath
            };
            let needed = facts
                .needed
                .iter()
                .map(|lib| {
                    let found = find(lib, entries, origin, env, &installed).unwrap_or_else(|| {
                        if system(lib) {
                            Found::System
                        } else {
                            Found::Missing {
                                searched: entries.clone(),
                            }
                        }
                    });
                    (lib.clone(), found)
                })
                .collect();
            Resolution {
                member: member.name.clone(),
                needed,
                foreign: None,
            }
        })
        .collect()
}

fn find(
    lib: &str,
    entries: &[String],
    origin: &str,
    env: &Environment,
    installed: &std::collections::BTreeSet<&str>,
) -> Option<Found> {
    for entry in entries {
        let dir = match expand_origin(entry, origin) {
            Some(model) => {
                let model = normalize(&model)?;
                let candidate = format!("{model}/{lib}");
                if installed.contains(candidate.as_str()) {
                    let rel = candidate.strip_prefix(SITE_PACKAGES).unwrap_or(&candidate);
                    return Some(Found::InWheel {
                        path: rel.trim_start_matches('/').to_string(),
                    });
                }
                match model.strip_prefix(SITE_PACKAGES) {
                    Some(rest) => env.site_packages.join(rest.trim_start_matches('/')),
                    None => continue,
                }
            }
            None if entry.starts_with('/') => env.root.join(entry.trim_start_matches('/')),
            None => continue,
        };
        let path = dir.join(lib);
        if path.exists() {
            return Some(Found::Path {
                path,
                entry: entry.clone(),
            });
        }
    }
    None
}

/// The report, one block per ELF member; the second value says whether
/// every library was found.
pub fn to_human(resolutions: &[Resolution], env: &Environment) -> (String, bool) {
    let mut out = format!(
        "Resolved in site-packages {} (absolute entries under {}):\n",
        env.site_packages.display(),
        env.root.display()
    );
    let mut complete = true;
    for r in resolutions {
        if let Some(machine) = &r.foreign {
            complete = false;
            out.push_str(&format!(
                "{}: NOT LOADABLE (an ELF file for {machine}; this environment is {})\n",
                r.member, env.arch
            ));
            continue;
        }
        out.push_str(&format!("{}\n", r.member));
        for (lib, found) in &r.needed {
            let how = match found {
                Found::Path { path, entry } => format!("{} (RUNPATH {entry})", path.display()),
                Found::InWheel { path } => format!("{path} (in the wheel)"),
                Found::System => "the system's (manylinux policy)".to_string(),
                Found::Missing { searched } => {
                    complete = false;
                    format!("NOT FOUND (searched: {})", display_entries(searched))
                }
            };
            out.push_str(&format!("  {lib} => {how}\n"));
        }
    }
    (out, complete)
}

fn display_entries(entries: &[String]) -> String {
    if entries.is_empty() {
        "no RUNPATH".to_string()
    } else {
        entries.join(":")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::{ElfFacts, ElfKind};
    use crate::wheel::Member;

    fn elf(member: &str, needed: &[&str], runpath: &[&str]) -> (Member, ElfFacts) {
        let facts = ElfFacts {
            kind: ElfKind::SharedObject,
            machine: "x86_64".into(),
            arch: Some(Arch::X86_64),
            is_device_code: false,
            soname: None,
            needed: needed.iter().map(|s| s.to_string()).collect(),
            rpath: Vec::new(),
            runpath: runpath.iter().map(|s| s.to_string()).collect(),
            version_requirements: Default::default(),
            undefined_symbols: Default::default(),
            isa_needed: None,
            uses_pyfpe: false,
        };
        let m = Member {
            name: member.into(),
            installed: format!("{SITE_PACKAGES}/{member}"),
            in_data_purelib: false,
        };
        (m, facts)
    }

    fn wheel(elfs: Vec<(Member, ElfFacts)>) -> Wheel {
        Wheel {
            file_name: "p-1-cp312-cp312-manylinux_2_28_x86_64.whl".into(),
            name_platform_tags: None,
            metadata_platform_tags: Vec::new(),
            root_is_purelib: Some(false),
            members: elfs.iter().map(|(m, _)| m.clone()).collect(),
            elfs,
        }
    }

    #[test]
    fn found_through_runpath_in_the_wheel_on_the_system_or_not() {
        let site = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(site.path().join("_rocm_sdk_core/lib")).unwrap();
        std::fs::write(site.path().join("_rocm_sdk_core/lib/libamdhip64.so.7"), b"").unwrap();
        std::fs::create_dir_all(root.path().join("opt/rocm/lib")).unwrap();
        std::fs::write(root.path().join("opt/rocm/lib/libhipblas.so.3"), b"").unwrap();
        let w = wheel(vec![
            elf(
                "pkg/_m.so",
                &[
                    "libamdhip64.so.7",
                    "libhipblas.so.3",
                    "libown.so",
                    "libc.so.6",
                    "ld-linux-x86-64.so.2",
                    "libMIOpen.so.1",
                ],
                &[
                    "$ORIGIN/lib",
                    "$ORIGIN/../_rocm_sdk_core/lib",
                    "/opt/rocm/lib",
                ],
            ),
            elf("pkg/lib/libown.so", &[], &[]),
        ]);
        let env = Environment {
            site_packages: site.path().to_path_buf(),
            root: root.path().to_path_buf(),
            arch: Arch::X86_64,
        };
        let r = resolve(&w, &env);
        let got: Vec<&Found> = r[0].needed.iter().map(|(_, f)| f).collect();
        assert_eq!(
            got[0],
            &Found::Path {
                path: site.path().join("_rocm_sdk_core/lib/libamdhip64.so.7"),
                entry: "$ORIGIN/../_rocm_sdk_core/lib".into()
            }
        );
        assert_eq!(
            got[1],
            &Found::Path {
                path: root.path().join("opt/rocm/lib/libhipblas.so.3"),
                entry: "/opt/rocm/lib".into()
            }
        );
        assert_eq!(
            got[2],
            &Found::InWheel {
                path: "pkg/lib/libown.so".into()
            }
        );
        assert_eq!(got[3], &Found::System);
        assert_eq!(got[4], &Found::System);
        assert!(matches!(got[5], Found::Missing { .. }));
        let (text, complete) = to_human(&r, &env);
        assert!(!complete);
        assert!(text.contains("libMIOpen.so.1 => NOT FOUND (searched: $ORIGIN/lib:$ORIGIN/../_rocm_sdk_core/lib:/opt/rocm/lib)"), "{text}");
    }

    /// Only the environment's CPU's ELF files are resolved (with its
    /// loader and policies); one for another CPU cannot load there.
    #[test]
    fn another_cpus_file_is_not_loadable() {
        let site = tempfile::tempdir().unwrap();
        let (m, mut arm) = elf("pkg/_arm.so", &["libc.so.6", "ld-linux-aarch64.so.1"], &[]);
        arm.arch = Some(Arch::Aarch64);
        arm.machine = "aarch64".into();
        let w = wheel(vec![(m, arm), elf("pkg/_x86.so", &["libc.so.6"], &[])]);
        let mut env = Environment {
            site_packages: site.path().to_path_buf(),
            root: site.path().to_path_buf(),
            arch: Arch::Aarch64,
        };
        let r = resolve(&w, &env);
        let found: Vec<&Found> = r[0].needed.iter().map(|(_, f)| f).collect();
        assert_eq!(found, [&Found::System, &Found::System]);
        assert_eq!(r[1].foreign.as_deref(), Some("x86_64"));
        let (text, complete) = to_human(&r, &env);
        assert!(!complete);
        assert!(
            text.contains(
                "pkg/_x86.so: NOT LOADABLE (an ELF file for x86_64; this environment is aarch64)"
            ),
            "{text}"
        );
        env.arch = Arch::X86_64;
        let r = resolve(&w, &env);
        assert_eq!(r[0].foreign.as_deref(), Some("aarch64"));
        assert_eq!(r[1].needed, [("libc.so.6".to_string(), Found::System)]);
        assert_eq!(system_arch().unwrap().as_str(), std::env::consts::ARCH);
    }
}
