//! Thinning a split set (kpack): the host wheel carries no device code, so
//! thinning means choosing device wheels. The host wheel is copied as it
//! is; every device wheel with code for a requested family or target
//! (`gfx942:xnack+` code counting as gfx942's) is copied next to it, and
//! every one the host's `device-<target>` extras pull for a requested
//! target (AMD's chains: a target wheel and its family's); the others are
//! left out. Refusals (a requested
//! target no device wheel serves, a chosen set the host's markers do not
//! resolve in) come before anything is written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gfx_targets::{describe_target, expand, gfx_sort_key, processor, serves, Requested};
use kpack::wheel::{
    check_members, check_set, installed_once, read, read_devices, required_for_target, KpackWheel,
};

use crate::report::{DeviceWheelChoice, Report};
use atomic_write::resolved_path as resolved;

use crate::Request;

/// Thins the split set `req` names; see the module docs.
pub fn thin_set(req: &Request) -> Result<Report> {
    if req.name_suffix.is_some() {
        bail!(
            "--name-suffix: {} is a kpack host wheel, which its device wheels pin by name \
             (Requires-Dist: <name>==<version>); renaming it would orphan them",
            req.input.display()
        );
    }
    let host = read(req.input)?;
    if host.binaries.is_empty() {
        bail!(
            "{}: no binary refers to kpack archives; --device-wheel is for kpack host wheels \
             (a fat wheel is thinned without it)",
            req.input.display()
        );
    }
    if atomic_write::target_name(req.output)? != host.file_name() {
        bail!(
            "-o {}: the host wheel is copied unchanged, so the output must be named {}",
            req.output.display(),
            host.file_name()
        );
    }
    let devices = read_devices(req.device_wheels, "thin")?;
    check_members(&host, &devices)?;
    let requested = expand(req.gfx)?;
    let chosen = choose(req, &requested, &host, &devices)?;
    installed_once(&host, &chosen.wheels)?;
    let problems = check_set(&host, &chosen.wheels, &chosen.targets);
    if let Some(p) = problems.first() {
        bail!(
            "the chosen device wheels do not serve {}: {p} ({} problem(s); `rocm-wheel check` lists them)",
            req.input.display(),
            problems.len()
        );
    }
    let out_dir = atomic_write::target_dir(req.output);
    let mut outputs = vec![(req.input.to_path_buf(), req.output.to_path_buf())];
    let mut report = Report::default();
    for d in &devices {
        let kept = chosen.wheels.iter().any(|c| c.path == d.path);
        if kept {
            outputs.push((d.path.clone(), out_dir.join(d.file_name())));
        }
        let mut targets: Vec<String> = d.targets().into_iter().collect();
        targets.sort_by(|a, b| gfx_sort_key(a).cmp(&gfx_sort_key(b)));
        report.device_wheels.push(DeviceWheelChoice {
            file: d.file_name(),
            targets,
            kept,
        });
    }
    let inputs: Vec<&Path> = std::iter::once(req.input)
        .chain(devices.iter().map(|d| d.path.as_path()))
        .collect();
    copy_all(&inputs, &outputs)?;
    Ok(report)
}

/// The device wheels serving what `req` asks for, and the requested
/// targets they serve (which every marker must then resolve for).
struct Chosen<'a> {
    wheels: Vec<&'a KpackWheel>,
    targets: Vec<String>,
}

/// Whether the code objects `have` (target ids, features and all) hold
/// code for `target`: its own, a generic one covering it, or one for it
/// in an xnack/sramecc mode (the runtime picks the mode's).
fn serves_target(have: &BTreeSet<String>, target: &str) -> bool {
    (have.iter()).any(|p| serves(p, target) || serves(processor(p), target))
}

/// Chooses the device wheels with code for a requested family or target,
/// and those the host's extras pull for a requested target; refuses a
/// request no device wheel serves, naming what they do serve.
fn choose<'a>(
    req: &Request,
    requested: &[Requested],
    host: &KpackWheel,
    devices: &'a [KpackWheel],
) -> Result<Chosen<'a>> {
    let asked: Vec<&String> = requested.iter().flat_map(|r| r.targets.iter()).collect();
    let pulled: BTreeSet<String> = (asked.iter())
        .flat_map(|t| required_for_target(host, t))
        .collect();
    let wanted = |d: &KpackWheel| {
        let have = d.targets();
        asked.iter().any(|t| serves_target(&have, t)) || pulled.contains(&d.key())
    };
    let wheels: Vec<&KpackWheel> = devices.iter().filter(|d| wanted(d)).collect();
    let mut served = BTreeSet::new();
    for d in &wheels {
        served.extend(d.targets());
    }
    for r in requested {
        if !r.targets.iter().any(|t| serves_target(&served, t)) {
            let mut have: Vec<String> = devices.iter().flat_map(|d| d.targets()).collect();
            have.sort_by(|a, b| gfx_sort_key(a).cmp(&gfx_sort_key(b)));
            have.dedup();
            let have: Vec<String> = have.iter().map(|t| describe_target(t)).collect();
            bail!(
                "--gfx {}: no device wheel holds code for {} {} ({}); the device wheels given \
                 serve {}",
                req.gfx,
                if r.family { "family" } else { "target" },
                r.name,
                r.targets.join(", "),
                if have.is_empty() {
                    "nothing".to_string()
                } else {
                    have.join(", ")
                }
            );
        }
    }
    // What every marker must then resolve for: each requested target the
    // chosen wheels serve, as the archives name it (each xnack mode).
    let mut targets: Vec<String> = Vec::new();
    for t in asked {
        if served.contains(t) {
            targets.push(t.clone());
        } else {
            targets.extend(
                served
                    .iter()
                    .filter(|s| processor(s) == t.as_str())
                    .cloned(),
            );
        }
    }
    targets.dedup();
    Ok(Chosen { wheels, targets })
}

/// Copies each `(from, to)` of `outputs`, all or none: every target is
/// checked first (not a directory, not another output, not an input other
/// than its own source), every copy is staged next to its target, and only
/// then are they moved into place. A target that is its own source is left
/// as it is.
fn copy_all(inputs: &[&Path], outputs: &[(PathBuf, PathBuf)]) -> Result<()> {
    let inputs: Vec<PathBuf> = inputs.iter().map(|p| resolved(p)).collect();
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    for (from, to) in outputs {
        let (from, target) = (resolved(from), resolved(to));
        if !seen.insert(target.clone()) {
            bail!(
                "{} would be written twice: two wheels of the set have one file name",
                to.display()
            );
        }
        if target != from && inputs.contains(&target) {
            bail!(
                "{} is an input of this command: writing it would replace that input; choose another -o directory",
                to.display()
            );
        }
        if to.is_dir() {
            bail!(
                "{} is a directory: remove it or choose another -o directory",
                to.display()
            );
        }
    }
    let mut copies: Vec<(&Path, Box<dyn std::io::Read>)> = Vec::new();
    for (from, to) in outputs {
        if resolved(from) == resolved(to) {
            continue;
        }
        let src =
            std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?;
        copies.push((to, Box::new(src)));
    }
    atomic_write::write_all_or_none(copies, 0o644)
}
