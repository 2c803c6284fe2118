//! The checks themselves, as steps that each return data:
//! [`arch`] decides the CPU the wheel is judged for; [`resolve`] finds
//! which libraries the wheel itself provides and the most compatible
//! policy each ELF file meets; [`violations`] and [`rpath`] turn each ELF
//! file's problems into findings; [`tags`] compares what the wheel claims
//! with what its ELF files need. [`check_wheel`] runs them in that order
//! and assembles the report.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use crate::policy::{Arch, Policies};
use crate::report::{ElfReport, Finding, Report, Severity, SCHEMA_VERSION};
use crate::wheel::{read_wheel, Wheel};

mod arch;
mod resolve;
mod rpath;
mod tags;
mod violations;

pub(crate) use arch::known_arches;
pub use arch::wheel_arch;
pub use resolve::expand_origin;
use resolve::{ElfEval, Resolution};
pub use rpath::is_build_tree_rpath;
use violations::Against;

/// Runtime libraries a ROCm wheel may load from the ROCm installation
/// instead of bundling them (the analogue of `auditwheel repair --exclude`).
pub const DEFAULT_ALLOWED_EXTERNALS: &[&str] = &[
    "libamdhip64.so.*",
    "libhiprtc.so.*",
    "libhiprtc-builtins.so.*",
    "libhsa-runtime64.so.*",
    "libamd_comgr.so.*",
    "librocblas.so.*",
    "libhipblas.so.*",
    "libhipblaslt.so.*",
    "libMIOpen.so.*",
    "librocsolver.so.*",
    "libhipsolver.so.*",
    "librocfft.so.*",
    "libhipfft.so.*",
    "librocsparse.so.*",
    "libhipsparse.so.*",
    "libhipsparselt.so.*",
    "librocrand.so.*",
    "libhiprand.so.*",
    "librccl.so.*",
    "libroctracer64.so.*",
    "libroctx64.so.*",
    "librocprofiler-sdk*.so.*",
    "librocprofiler-register.so.*",
    "librocm_smi64.so.*",
    "libamd_smi.so.*",
    "librocm-core.so.*",
];

/// Absolute search path entries a ROCm wheel may keep without
/// `--allow-rpath-prefix`: the documented ROCm install location
/// (`/opt/rocm` is the link every ROCm install maintains; versioned
/// `/opt/rocm-X.Y.Z` paths are not allowed, they pin one release).
pub const DEFAULT_ALLOWED_RPATHS: &[&str] = &["/opt/rocm/lib"];

#[derive(Debug, Clone)]
pub struct Options {
    /// Policy to check against (`manylinux_2_28`, `manylinux2014_x86_64`,
    /// ...), in the wheel's architecture. `None`: the most compatible
    /// manylinux tag the wheel claims.
    pub policy: Option<String>,
    /// Glob patterns of sonames that may stay external (not bundled).
    pub allow_external: Vec<String>,
    /// Absolute rpath prefixes that are acceptable (e.g. `/opt/rocm`),
    /// matched by whole path components.
    pub allow_rpath_prefixes: Vec<String>,
}

impl Options {
    /// The options `rocm-wheel check` takes: the built-in ROCm lists
    /// (unless `no_defaults`) extended by `allow_external` and
    /// `allow_rpath_prefixes`.
    pub fn with_extra(
        policy: Option<String>,
        no_defaults: bool,
        allow_external: Vec<String>,
        allow_rpath_prefixes: Vec<String>,
    ) -> Options {
        let defaults = |list: &[&str]| -> Vec<String> {
            if no_defaults {
                Vec::new()
            } else {
                list.iter().map(|s| s.to_string()).collect()
            }
        };
        let mut opts = Options {
            policy,
            allow_external: defaults(DEFAULT_ALLOWED_EXTERNALS),
            allow_rpath_prefixes: defaults(DEFAULT_ALLOWED_RPATHS),
        };
        opts.allow_external.extend(allow_external);
        opts.allow_rpath_prefixes.extend(allow_rpath_prefixes);
        opts
    }
}

impl Default for Options {
    /// The ROCm defaults: the external allowlist and the allowed rpaths.
    fn default() -> Self {
        Options::with_extra(None, false, Vec::new(), Vec::new())
    }
}

/// Check a wheel file. `Err` means the input could not be read (or the
/// options are invalid); findings, however severe, are in the `Report`.
pub fn check_wheel_file(path: &Path, opts: &Options) -> Result<Report> {
    // Validate options before doing any work.
    if let Some(name) = &opts.policy {
        arch::check_policy_name(name)?;
    }
    let wheel = read_wheel(path)?;
    check_wheel(&wheel, opts)
}

/// Check an already read wheel.
pub fn check_wheel(wheel: &Wheel, opts: &Options) -> Result<Report> {
    let arch = wheel_arch(wheel, opts.policy.as_deref())?;
    let policies = Policies::for_arch(arch);
    let target_override = match &opts.policy {
        Some(name) => Some(arch::policy_index(&policies, name, &wheel.file_name)?),
        None => None,
    };

    let bundled = resolve::bundled_libraries(wheel, arch);
    let mut evals = resolve::evaluate(wheel, &bundled, opts);
    for e in &mut evals {
        e.best = (0..policies.policies.len())
            .find(|&k| violations::violations(e, &policies.policies[k]).is_empty());
    }
    let wheel_best = wheel_best(&evals);
    let needed_tag = (!evals.is_empty()).then(|| tag_of(&policies, wheel_best));
    let claims = tags::claims(wheel, arch);
    let target = target_override.or_else(|| {
        let (_, glibc) = claims.manylinux.as_ref()?;
        // A claim between two known policies is checked against the older one.
        policies.policies.iter().rposition(|p| p.glibc <= *glibc)
    });

    let against = against(&policies, target);
    let installed = wheel.installed_paths();
    let mut findings = Findings::default();
    for e in &evals {
        findings.extend(violations::policy_findings(e, &against, &policies, wheel));
        findings.extend(rpath::rpath_findings(e, &installed, opts));
    }
    findings.extend(foreign_architecture_findings(wheel, arch));
    // Wheel-level findings; the tags are only judged against binaries.
    let has_binaries = !evals.is_empty();
    if has_binaries {
        let found = tags::placement_findings(wheel, &evals, &claims, &needed_tag);
        findings.extend(found);
    }
    findings.extend(tags::name_findings(wheel));
    findings.extend(tags::abi_findings(wheel));
    if has_binaries {
        let found = tags::tag_findings(&claims, wheel_best, &needed_tag, &policies);
        findings.extend(found);
    }

    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        wheel: wheel.file_name.clone(),
        arch,
        claimed_platform_tags: claims.claimed,
        root_is_purelib: wheel.root_is_purelib,
        target_policy: target.map(|k| policies.policies[k].tag()),
        platform_tag: needed_tag,
        elfs: elf_reports(wheel, &evals, &bundled.by_path, &policies),
        findings: findings.0,
        summary: Default::default(),
    };
    report.finish();
    Ok(report)
}

/// Findings in the order the steps add them (the report sorts them).
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn add(
        &mut self,
        severity: Severity,
        code: &'static str,
        file: Option<&str>,
        message: String,
        hint: String,
    ) {
        self.0.push(Finding {
            severity,
            code,
            file: file.map(str::to_string),
            message,
            hint,
        })
    }

    fn extend(&mut self, other: Findings) {
        self.0.extend(other.0)
    }
}

/// The most compatible policy every host ELF meets; `None` if one meets
/// none (or there are none).
fn wheel_best(evals: &[ElfEval]) -> Option<usize> {
    if evals.iter().any(|e| e.best.is_none()) {
        None
    } else {
        evals.iter().filter_map(|e| e.best).max()
    }
}

/// The platform tag of policy `best`, `linux_<arch>` for none.
fn tag_of(policies: &Policies, best: Option<usize>) -> String {
    match best {
        Some(k) => policies.policies[k].tag(),
        None => format!("linux_{}", policies.arch),
    }
}

/// The policy ELF files are judged against: the target, or without one
/// the newest known (with a label saying so).
fn against(policies: &Policies, target: Option<usize>) -> Against<'_> {
    let policy = &policies.policies[target.unwrap_or(policies.policies.len() - 1)];
    let label = match target {
        Some(_) => policy.tag(),
        None => format!("any manylinux policy (newest known: {})", policy.tag()),
    };
    Against { policy, label }
}

/// ELF files for another CPU than the wheel's (AMDGPU code objects aside).
fn foreign_architecture_findings(wheel: &Wheel, arch: Arch) -> Findings {
    let mut out = Findings::default();
    for (member, facts) in &wheel.elfs {
        if facts.arch == Some(arch) || facts.is_device_code {
            continue;
        }
        out.add(
            Severity::Error,
            "foreign-architecture",
            Some(&member.name),
            format!(
                "is an ELF file for {}, in a wheel checked for {arch}",
                facts.machine
            ),
            format!("build it for {arch} or remove it from the wheel"),
        );
    }
    out
}

/// The report's per-ELF part: each file's facts and, for host ELFs, how
/// each dependency resolves and the platform tag the file needs.
fn elf_reports(
    wheel: &Wheel,
    evals: &[ElfEval],
    by_path: &BTreeMap<&str, usize>,
    policies: &Policies,
) -> Vec<ElfReport> {
    let newest = &policies.policies[policies.policies.len() - 1];
    wheel
        .elfs
        .iter()
        .map(|(member, facts)| {
            let eval = evals.iter().find(|e| std::ptr::eq(e.facts, facts));
            let mut r = ElfReport {
                path: member.name.clone(),
                kind: facts.kind,
                machine: facts.machine.clone(),
                soname: facts.soname.clone(),
                needed: facts.needed.clone(),
                rpath: facts.rpath.clone(),
                runpath: facts.runpath.clone(),
                version_requirements: facts.version_requirements.clone(),
                bundled: BTreeMap::new(),
                allowed_external: Vec::new(),
                system: Vec::new(),
                unresolved: Vec::new(),
                isa_needed: facts.isa_needed.clone(),
                platform_tag: None,
            };
            if let Some(e) = eval {
                for (soname, res) in &e.resolutions {
                    match res {
                        Resolution::Bundled(p) => {
                            let name = wheel.elfs[by_path[p.as_str()]].0.name.clone();
                            r.bundled.insert(soname.clone(), name);
                        }
                        Resolution::Loader => r.system.push(soname.clone()),
                        Resolution::AllowedExternal => r.allowed_external.push(soname.clone()),
                        Resolution::System => {
                            if newest.system_libraries.contains(soname) {
                                r.system.push(soname.clone())
                            } else {
                                r.unresolved.push(soname.clone())
                            }
                        }
                    }
                }
                r.platform_tag = Some(tag_of(policies, e.best));
            }
            r
        })
        .collect()
}
