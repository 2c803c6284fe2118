//! The checks themselves: library resolution inside the wheel, policy
//! evaluation, rpath hygiene and tag consistency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Result};

use crate::elf::{is_dynamic_loader, ElfFacts};
use crate::glob;
use crate::policy::{
    classify_platform_tag, compare_versions, split_version, PlatformTag, Policies, Policy, ARCH,
};
use crate::report::{ElfReport, Finding, Report, Severity, SCHEMA_VERSION};
use crate::wheel::{
    display_installed, normalize, parent, read_wheel, Member, Wheel, SITE_PACKAGES,
};

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

/// Substrings of rpath entries that point into a build tree (Bazel's
/// output tree, runfiles, sandboxes, temporary directories).
const BUILD_TREE_MARKERS: &[&str] = &[
    "_solib_",
    "bazel-out",
    "bazel-bin",
    "/execroot/",
    "/_bazel_",
    ".runfiles",
    "/sandbox/",
    "/proc/self/cwd",
];
const TEMP_PREFIXES: &[&str] = &["/tmp/", "/var/tmp/", "/dev/shm/"];

#[derive(Debug, Clone)]
pub struct Options {
    /// Policy to check against (`manylinux_2_28`, `manylinux2014_x86_64`,
    /// ...). `None`: the most compatible manylinux tag the wheel claims.
    pub policy: Option<String>,
    /// Glob patterns of sonames that may stay external (not bundled).
    pub allow_external: Vec<String>,
    /// Absolute rpath prefixes that are acceptable (e.g. `/opt/rocm`).
    pub allow_rpath_prefixes: Vec<String>,
}

impl Default for Options {
    /// The ROCm defaults for the external allowlist, nothing else.
    fn default() -> Self {
        Self {
            policy: None,
            allow_external: DEFAULT_ALLOWED_EXTERNALS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            allow_rpath_prefixes: Vec::new(),
        }
    }
}

/// Check a wheel file. `Err` means the input could not be read (or the
/// options are invalid); findings, however severe, are in the `Report`.
pub fn check_wheel_file(path: &Path, opts: &Options) -> Result<Report> {
    let policies = Policies::x86_64();
    // Validate options before doing any work.
    if let Some(name) = &opts.policy {
        if policies.find(name).is_none() {
            bail!(
                "unknown policy {name:?}; known x86_64 policies: {} (legacy names manylinux1, manylinux2010, manylinux2014 work too)",
                policies.known_names().join(", ")
            );
        }
    }
    let wheel = read_wheel(path)?;
    check_wheel(&wheel, opts)
}

/// How one DT_NEEDED entry is satisfied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolution {
    /// Found inside the wheel at this installed path.
    Bundled(String),
    Loader,
    AllowedExternal,
    /// Must come from the system; fine for policies that whitelist it.
    System,
}

struct ElfEval<'a> {
    member: &'a Member,
    facts: &'a ElfFacts,
    resolutions: Vec<(String, Resolution)>,
    /// Index of the most compatible policy this ELF satisfies.
    best: Option<usize>,
}

/// Search directories from an ELF's RUNPATH (or RPATH if there is no
/// RUNPATH), `$ORIGIN` expanded in the install layout. Non-`$ORIGIN` entries
/// cannot point into the wheel and are skipped.
fn origin_dirs(member: &Member, facts: &ElfFacts) -> Vec<String> {
    let list = if facts.runpath.is_empty() {
        &facts.rpath
    } else {
        &facts.runpath
    };
    let origin = parent(&member.installed);
    list.iter()
        .filter_map(|e| expand_origin(e, origin))
        .filter_map(|p| normalize(&p))
        .collect()
}

fn expand_origin(entry: &str, origin: &str) -> Option<String> {
    for token in ["$ORIGIN", "${ORIGIN}"] {
        if let Some(rest) = entry.strip_prefix(token) {
            if rest.is_empty() || rest.starts_with('/') {
                return Some(format!("{origin}{rest}"));
            }
        }
    }
    None
}

/// Check an already read wheel.
pub fn check_wheel(wheel: &Wheel, opts: &Options) -> Result<Report> {
    let policies = Policies::x86_64();
    let target_override = match &opts.policy {
        Some(name) => match policies.index_of(name) {
            Some(i) => Some(i),
            None => bail!(
                "unknown policy {name:?}; known: {}",
                policies.known_names().join(", ")
            ),
        },
        None => None,
    };

    let mut findings: Vec<Finding> = Vec::new();
    let mut add = |severity, code, file: Option<&str>, message: String, hint: String| {
        findings.push(Finding {
            severity,
            code,
            file: file.map(str::to_string),
            message,
            hint,
        })
    };

    // ---- library resolution -------------------------------------------
    let installed = wheel.installed_paths();
    // installed path -> index into wheel.elfs, for host ELFs only.
    let host: Vec<usize> = (0..wheel.elfs.len())
        .filter(|&i| wheel.elfs[i].1.is_x86_64)
        .collect();
    let by_path: BTreeMap<&str, usize> = host
        .iter()
        .map(|&i| (wheel.elfs[i].0.installed.as_str(), i))
        .collect();
    let own_dirs: BTreeMap<usize, Vec<String>> = host
        .iter()
        .map(|&i| (i, origin_dirs(&wheel.elfs[i].0, &wheel.elfs[i].1)))
        .collect();
    let lookup = |dirs: &[String], soname: &str| -> Option<String> {
        dirs.iter()
            .map(|d| format!("{}/{soname}", d.trim_end_matches('/')))
            .find(|p| by_path.contains_key(p.as_str()))
    };
    // First pass: each ELF's own search path.
    let mut bundled: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
    let mut parents: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for &i in &host {
        for soname in &wheel.elfs[i].1.needed {
            if let Some(p) = lookup(&own_dirs[&i], soname) {
                parents.entry(by_path[p.as_str()]).or_default().insert(i);
                bundled.entry(i).or_default().insert(soname.clone(), p);
            }
        }
    }
    // Then, until nothing changes: a library loaded by another ELF of the
    // wheel can use its loader's search path too (the soname is then already
    // loaded; auditwheel's lddtree also searches the root's paths).
    loop {
        let mut changed = false;
        for &i in &host {
            for soname in &wheel.elfs[i].1.needed {
                if bundled.get(&i).is_some_and(|m| m.contains_key(soname)) {
                    continue;
                }
                let mut seen = BTreeSet::new();
                let mut queue: Vec<usize> = parents
                    .get(&i)
                    .map(|s| s.iter().copied().collect())
                    .unwrap_or_default();
                while let Some(a) = queue.pop() {
                    if !seen.insert(a) {
                        continue;
                    }
                    if let Some(p) = lookup(&own_dirs[&a], soname) {
                        parents.entry(by_path[p.as_str()]).or_default().insert(i);
                        bundled.entry(i).or_default().insert(soname.clone(), p);
                        changed = true;
                        break;
                    }
                    if let Some(s) = parents.get(&a) {
                        queue.extend(s.iter().copied());
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }

    let allowed = |soname: &str| opts.allow_external.iter().any(|p| glob::matches(p, soname));
    let newest = policies.policies.len() - 1;

    let mut evals: Vec<ElfEval> = Vec::new();
    for &i in &host {
        let (member, facts) = (&wheel.elfs[i].0, &wheel.elfs[i].1);
        let resolutions: Vec<(String, Resolution)> = facts
            .needed
            .iter()
            .map(|n| {
                let r = if let Some(p) = bundled.get(&i).and_then(|m| m.get(n)) {
                    Resolution::Bundled(p.clone())
                } else if is_dynamic_loader(n) {
                    Resolution::Loader
                } else if allowed(n) {
                    Resolution::AllowedExternal
                } else {
                    Resolution::System
                };
                (n.clone(), r)
            })
            .collect();
        let mut eval = ElfEval {
            member,
            facts,
            resolutions,
            best: None,
        };
        eval.best = (0..policies.policies.len())
            .find(|&k| violations(&eval, &policies.policies[k]).is_empty());
        evals.push(eval);
    }

    let wheel_best: Option<usize> = if evals.iter().any(|e| e.best.is_none()) {
        None
    } else {
        evals.iter().filter_map(|e| e.best).max()
    };
    let needed_tag = if evals.is_empty() {
        None
    } else {
        Some(match wheel_best {
            Some(k) => policies.policies[k].tag(),
            None => format!("linux_{ARCH}"),
        })
    };

    // ---- claimed tags -------------------------------------------------
    let claimed = wheel.claimed_platform_tags();
    let classified: Vec<PlatformTag> = claimed.iter().map(|t| classify_platform_tag(t)).collect();
    let claimed_manylinux: Option<(String, (u32, u32))> = classified
        .iter()
        .filter_map(|c| match c {
            PlatformTag::Manylinux { tag, glibc, arch } if arch == ARCH => {
                Some((tag.clone(), *glibc))
            }
            _ => None,
        })
        .min_by_key(|(_, g)| *g);
    // A wheel for another CPU cannot be judged with x86_64 policies; say so
    // instead of flagging every file as foreign.
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
    let target: Option<usize> = target_override.or_else(|| {
        let (_, glibc) = claimed_manylinux.as_ref()?;
        // A claim between two known policies is checked against the older one.
        policies.policies.iter().rposition(|p| p.glibc <= *glibc)
    });
    let target_name = target.map(|k| policies.policies[k].tag());

    // ---- per-ELF findings ---------------------------------------------
    let check_against = target.unwrap_or(newest);
    let against = &policies.policies[check_against];
    let against_label = match target {
        Some(_) => against.tag(),
        None => format!("any manylinux policy (newest known: {})", against.tag()),
    };
    for e in &evals {
        let file = Some(e.member.name.as_str());
        let this_best = e.best.map(|k| policies.policies[k].tag());
        for v in violations(e, against) {
            match v {
                Violation::Versions { family, versions } => {
                    let newest_allowed = against
                        .newest_version(&family)
                        .map(|v| format!("at most {v}"))
                        .unwrap_or_else(|| "none".into());
                    let private = versions.iter().any(|(v, _)| !split_version(v).1.starts_with(|c: char| c.is_ascii_digit()) && !policies.policies[newest].allows_version(v));
                    let list = versions.iter().map(|(v, lib)| format!("{v} ({lib})")).collect::<Vec<_>>().join(", ");
                    let hint = if private {
                        "it links against private or unknown symbol versions; rebuild without them (they are never manylinux-compatible)".to_string()
                    } else {
                        match &this_best {
                            Some(t) => format!("build in an older manylinux image or against an older sysroot, or claim {t}"),
                            None => "build in an older manylinux image or against an older sysroot".into(),
                        }
                    };
                    add(
                        Severity::Error,
                        "symbol-version",
                        file,
                        format!("requires {list}, but {against_label} allows {newest_allowed}"),
                        hint,
                    );
                }
                Violation::NotWhitelisted(soname) => {
                    let from = policies.policies.iter().find(|p| p.system_libraries.contains(&soname));
                    let same_name: Vec<&Member> = wheel
                        .members
                        .iter()
                        .filter(|m| m.installed.rsplit('/').next() == Some(soname.as_str()))
                        .collect();
                    if let Some(m) = same_name.first() {
                        let rel = relative_dir(parent(&e.member.installed), parent(&m.installed));
                        add(
                            Severity::Error,
                            "unreachable-library",
                            file,
                            format!("needs {soname}; the wheel has {} but this ELF's search path does not reach it", m.name),
                            format!("add $ORIGIN{rel} to its RUNPATH (rocm-wheel rpath / patchelf --set-rpath)"),
                        );
                    } else if let Some(p) = from {
                        add(
                            Severity::Error,
                            "external-library",
                            file,
                            format!(
                                "needs {soname}, which {} systems provide only from {} on; it is not bundled",
                                against.tag(),
                                p.tag()
                            ),
                            format!("bundle {soname} in the wheel, or claim {}", p.tag()),
                        );
                    } else {
                        add(
                            Severity::Error,
                            "external-library",
                            file,
                            format!("needs {soname}: not bundled in the wheel, not a manylinux system library, not in the external allowlist"),
                            format!("bundle it (auditwheel repair, or copy it into the wheel and add a $ORIGIN RUNPATH), or if the runtime provides it pass --allow-external '{}'", suggest_pattern(&soname)),
                        );
                    }
                }
                Violation::Forbidden { library, symbols } => add(
                    Severity::Error,
                    "forbidden-symbol",
                    file,
                    format!(
                        "imports {} from {library}, which {} forbids (not provided by every distribution's {library})",
                        symbols.join(", "),
                        against.tag()
                    ),
                    "bundle the library under a private name (auditwheel repair) or stop using these symbols".into(),
                ),
                Violation::Isa(level) => add(
                    Severity::Error,
                    "isa-extension",
                    file,
                    format!("is marked as needing {level} (GNU property note); manylinux assumes baseline x86_64"),
                    "build for baseline x86-64 (drop -march=x86-64-v2+ / -mneeds) or dispatch at run time".into(),
                ),
                Violation::PyFpe => add(
                    Severity::Error,
                    "pyfpe",
                    file,
                    "imports PyFPE_jbuf: built against a Python configured --with-fpectl".into(),
                    "rebuild against a standard CPython".into(),
                ),
            }
        }
        let allowed_here: Vec<&str> = e
            .resolutions
            .iter()
            .filter(|(_, r)| *r == Resolution::AllowedExternal)
            .map(|(s, _)| s.as_str())
            .collect();
        if !allowed_here.is_empty() {
            add(
                Severity::Info,
                "allowed-external",
                file,
                format!("loads {} from the system (allowlisted, not bundled)", allowed_here.join(", ")),
                "make sure the runtime (e.g. ROCm) that provides them is documented as a requirement".into(),
            );
        }
        check_rpaths(e, &installed, opts, &mut add);
    }

    // Non-x86_64 ELF files.
    for (member, facts) in &wheel.elfs {
        if facts.is_x86_64 || facts.is_device_code {
            continue;
        }
        add(
            Severity::Error,
            "foreign-architecture",
            Some(&member.name),
            format!(
                "is a {} ELF file in a wheel checked for {ARCH}",
                facts.machine
            ),
            "build it for x86_64 or remove it from the wheel".into(),
        );
    }

    // ---- wheel-level findings -------------------------------------------
    let has_binaries = !evals.is_empty();
    if has_binaries {
        if classified.contains(&PlatformTag::Any) {
            add(
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
        for e in &evals {
            let at_root = wheel.root_is_purelib == Some(true) && !e.member.name.contains(".data/");
            if at_root || e.member.in_data_purelib {
                add(
                    Severity::Error,
                    "purelib-with-binaries",
                    Some(&e.member.name),
                    "is platform code installed as purelib".into(),
                    "set Root-Is-Purelib: false in WHEEL (or move it to .data/platlib)".into(),
                );
            }
        }
    }
    if let (Some(name_tags), false) = (
        &wheel.name_platform_tags,
        wheel.metadata_platform_tags.is_empty(),
    ) {
        let a: BTreeSet<&String> = name_tags.iter().collect();
        let b: BTreeSet<&String> = wheel.metadata_platform_tags.iter().collect();
        if a != b {
            add(
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
        add(
            Severity::Warning,
            "wheel-name",
            None,
            "file name is not a wheel name ({name}-{version}-{python}-{abi}-{platform}.whl); tags read from WHEEL".into(),
            "name the file after its tags".into(),
        );
    }
    if has_binaries {
        for c in &classified {
            match c {
                PlatformTag::Linux { tag, .. } => add(
                    Severity::Warning,
                    "not-uploadable",
                    None,
                    format!("claims {tag}, which PyPI does not accept"),
                    match &needed_tag {
                        Some(t) if t.starts_with("manylinux") => format!("retag as {t}"),
                        _ => "fix the per-file errors, then retag as manylinux".into(),
                    },
                ),
                PlatformTag::Manylinux { tag, arch, .. } if arch != ARCH => add(
                    Severity::Error,
                    "platform-tag",
                    None,
                    format!("claims {tag}, but its ELF files are {ARCH}"),
                    format!("tag the wheel {}", needed_tag.clone().unwrap_or_default()),
                ),
                PlatformTag::Other(tag) => add(
                    Severity::Warning,
                    "platform-tag",
                    None,
                    format!("claims {tag}, which this checker cannot verify (it knows manylinux {ARCH})"),
                    "check it with a tool for that platform".into(),
                ),
                _ => {}
            }
        }
        if let Some((tag, glibc)) = &claimed_manylinux {
            match wheel_best {
                None => add(
                    Severity::Error,
                    "platform-tag",
                    None,
                    format!("claims {tag}, but its ELF files fit no manylinux policy (linux_{ARCH}); see the per-file errors"),
                    "fix the per-file errors (or tag it linux_x86_64 for local use only)".into(),
                ),
                Some(k) if policies.policies[k].glibc > *glibc => add(
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
                Some(k) if policies.policies[k].glibc < *glibc => add(
                    Severity::Info,
                    "platform-tag",
                    None,
                    format!("claims {tag}; its ELF files would also allow {}", policies.policies[k].tag()),
                    format!("tag it {} to install on older systems too", policies.policies[k].tag()),
                ),
                _ => {}
            }
        }
    }

    let elfs = wheel
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
                            if policies.policies[newest].system_libraries.contains(soname) {
                                r.system.push(soname.clone())
                            } else {
                                r.unresolved.push(soname.clone())
                            }
                        }
                    }
                }
                r.platform_tag = Some(match e.best {
                    Some(k) => policies.policies[k].tag(),
                    None => format!("linux_{ARCH}"),
                });
            }
            r
        })
        .collect();

    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        wheel: wheel.file_name.clone(),
        claimed_platform_tags: claimed,
        root_is_purelib: wheel.root_is_purelib,
        target_policy: target_name,
        platform_tag: needed_tag,
        elfs,
        findings,
        summary: Default::default(),
    };
    report.finish();
    Ok(report)
}

enum Violation {
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
fn violations(e: &ElfEval, p: &Policy) -> Vec<Violation> {
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

fn check_rpaths(
    e: &ElfEval,
    installed: &BTreeSet<&str>,
    opts: &Options,
    add: &mut impl FnMut(Severity, &'static str, Option<&str>, String, String),
) {
    let file = Some(e.member.name.as_str());
    let facts = e.facts;
    let fix_tool = "rewrite it during wheel assembly (rocm-wheel rpath, or patchelf --set-rpath)";
    if !facts.rpath.is_empty() && !facts.runpath.is_empty() {
        add(
            Severity::Warning,
            "rpath-and-runpath",
            file,
            "has both DT_RPATH and DT_RUNPATH; the loader ignores DT_RPATH".into(),
            "keep only DT_RUNPATH".into(),
        );
    } else if !facts.rpath.is_empty() {
        add(
            Severity::Info,
            "dt-rpath",
            file,
            "uses DT_RPATH (searched before LD_LIBRARY_PATH and inherited by the libraries it loads) rather than DT_RUNPATH".into(),
            "link with -Wl,--enable-new-dtags, or convert it with rocm-wheel rpath".into(),
        );
    }
    let origin = parent(&e.member.installed);
    let (kind, list) = if facts.runpath.is_empty() {
        ("DT_RPATH", &facts.rpath)
    } else {
        ("DT_RUNPATH", &facts.runpath)
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for entry in list.iter() {
        if entry.is_empty() {
            add(
                Severity::Error,
                "rpath-empty-entry",
                file,
                format!("{kind} {:?} has an empty entry, which the loader reads as the current directory", list.join(":")),
                format!("remove the empty entry; {fix_tool}"),
            );
            continue;
        }
        let key = expand_origin(entry, origin)
            .and_then(|p| normalize(&p))
            .unwrap_or_else(|| entry.trim_end_matches('/').to_string());
        if !seen.insert(key) {
            add(
                Severity::Warning,
                "rpath-duplicate",
                file,
                format!("{kind} lists {entry:?} more than once"),
                format!("drop the duplicate; {fix_tool}"),
            );
            continue;
        }
        if BUILD_TREE_MARKERS.iter().any(|m| entry.contains(m))
            || TEMP_PREFIXES.iter().any(|t| entry.starts_with(t))
        {
            add(
                Severity::Error,
                "rpath-build-tree",
                file,
                format!("{kind} entry {entry:?} points into the build tree; it will not exist where the wheel is installed"),
                format!("replace it with a $ORIGIN-relative path into the wheel; {fix_tool}"),
            );
            continue;
        }
        if let Some(dir) = expand_origin(entry, origin) {
            let Some(dir) = normalize(&dir) else {
                add(
                    Severity::Error,
                    "rpath-outside-wheel",
                    file,
                    format!("{kind} entry {entry:?} climbs above the file system root"),
                    format!("fix the number of '..'; {fix_tool}"),
                );
                continue;
            };
            let prefix = format!("{}/", dir.trim_end_matches('/'));
            if installed.iter().any(|p| p.starts_with(&prefix)) {
                continue;
            }
            let shown = display_installed(&dir);
            if owned_by_wheel(&dir, installed) {
                add(
                    Severity::Warning,
                    "rpath-missing-target",
                    file,
                    format!("{kind} entry {entry:?} resolves to {shown}, which does not exist in the wheel"),
                    format!("remove the entry or bundle what it should provide; {fix_tool}"),
                );
            } else {
                add(
                    Severity::Info,
                    "rpath-outside-wheel",
                    file,
                    format!("{kind} entry {entry:?} resolves to {shown}, outside this wheel"),
                    "make sure the package that installs it is a declared dependency".into(),
                );
            }
            continue;
        }
        if entry.starts_with('$') {
            add(
                Severity::Warning,
                "rpath-dynamic-token",
                file,
                format!(
                    "{kind} entry {entry:?} uses a loader token that cannot be checked statically"
                ),
                format!("prefer a plain $ORIGIN-relative path; {fix_tool}"),
            );
            continue;
        }
        if !entry.starts_with('/') {
            add(
                Severity::Error,
                "rpath-relative",
                file,
                format!("{kind} entry {entry:?} is relative, so it is resolved against the process's current directory"),
                format!("use $ORIGIN/{entry}; {fix_tool}"),
            );
            continue;
        }
        if !opts
            .allow_rpath_prefixes
            .iter()
            .any(|p| entry.starts_with(p.as_str()))
        {
            add(
                Severity::Error,
                "rpath-absolute",
                file,
                format!("{kind} entry {entry:?} is an absolute path outside the allowed prefixes"),
                format!(
                    "use a $ORIGIN-relative path, or allow it with --allow-rpath-prefix {entry}"
                ),
            );
        }
    }
}

/// Whether a missing directory would belong to this wheel (so its absence
/// is a packaging mistake) rather than to another installed package: its
/// nearest existing ancestor lies in a regular package of this wheel (one
/// with `__init__.py`) or in a `*.libs` directory. Namespace directories
/// (`jax_plugins/`), site-packages itself and the prefix are shared.
fn owned_by_wheel(dir: &str, installed: &BTreeSet<&str>) -> bool {
    let exists = |d: &str| {
        let prefix = format!("{d}/");
        installed.iter().any(|p| p.starts_with(&prefix))
    };
    let mut d = dir;
    while d.starts_with(SITE_PACKAGES) && d.len() > SITE_PACKAGES.len() && !exists(d) {
        d = parent(d);
    }
    while d.starts_with(SITE_PACKAGES) && d.len() > SITE_PACKAGES.len() {
        if d.ends_with(".libs") || installed.contains(format!("{d}/__init__.py").as_str()) {
            return true;
        }
        d = parent(d);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(relative_dir("/a/b", "/a/c/d"), "/../c/d");
        assert_eq!(relative_dir("/a/b", "/a/b"), "");
        assert_eq!(suggest_pattern("libfoo.so.1.2"), "libfoo.so.*");
        assert_eq!(
            expand_origin("$ORIGIN/../lib", "/x/y").unwrap(),
            "/x/y/../lib"
        );
        assert_eq!(expand_origin("${ORIGIN}", "/x/y").unwrap(), "/x/y");
        assert!(expand_origin("$ORIGINAL", "/x").is_none());
        let files = [
            format!("{SITE_PACKAGES}/pkg/__init__.py"),
            format!("{SITE_PACKAGES}/pkg/x.so"),
            format!("{SITE_PACKAGES}/ns/sub/__init__.py"),
            format!("{SITE_PACKAGES}/ns/sub/x.so"),
            format!("{SITE_PACKAGES}/pkg.libs/libz.so"),
        ];
        let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
        let owned = |rel: &str| owned_by_wheel(&format!("{SITE_PACKAGES}/{rel}"), &set);
        assert!(owned("pkg/missing/lib"));
        assert!(owned("ns/sub/lib"));
        assert!(owned("pkg.libs/sub"));
        assert!(!owned("ns/rocm/lib"));
        assert!(!owned("other/lib"));
        assert!(!owned_by_wheel("/prefix/lib", &set));
    }
}
