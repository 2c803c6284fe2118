//! Thinning a split set (kpack): the host wheel carries no device code, so
//! thinning means choosing device wheels. The host wheel is copied as it
//! is; every device wheel with code for a requested family or target is
//! copied next to it; the others are left out. Refusals (a requested
//! target no device wheel serves, a chosen set the host's markers do not
//! resolve in) come before anything is written.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use gfx_targets::{describe_target, expand, gfx_sort_key, has_code_for, Requested};
use kpack::wheel::{check_set, read, read_devices, KpackWheel};

use crate::report::{DeviceWheelChoice, Report};
use crate::{file_name, output_dir, Request};

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
    if file_name(req.output)? != host.file_name() {
        bail!(
            "-o {}: the host wheel is copied unchanged, so the output must be named {}",
            req.output.display(),
            host.file_name()
        );
    }
    let devices = read_devices(req.device_wheels, "thin")?;
    let requested = expand(req.gfx)?;
    let chosen = choose(req, &requested, &devices)?;
    let problems = check_set(&host, &chosen.wheels, &chosen.targets);
    if let Some(p) = problems.first() {
        bail!(
            "the chosen device wheels do not serve {}: {p} ({} problem(s); `rocm-wheel check` lists them)",
            req.input.display(),
            problems.len()
        );
    }
    let out_dir = output_dir(req.output);
    copy(req.input, req.output)?;
    let mut report = Report::default();
    for d in &devices {
        let kept = chosen.wheels.iter().any(|c| c.path == d.path);
        if kept {
            copy(&d.path, &out_dir.join(d.file_name()))?;
        }
        let mut targets: Vec<String> = d.targets().into_iter().collect();
        targets.sort_by(|a, b| gfx_sort_key(a).cmp(&gfx_sort_key(b)));
        report.device_wheels.push(DeviceWheelChoice {
            file: d.file_name(),
            targets,
            kept,
        });
    }
    Ok(report)
}

/// The device wheels serving what `req` asks for, and the requested
/// targets they serve (which every marker must then resolve for).
struct Chosen<'a> {
    wheels: Vec<&'a KpackWheel>,
    targets: Vec<String>,
}

/// Chooses the device wheels with code for a requested family or target;
/// refuses a request no device wheel serves, naming what they do serve.
fn choose<'a>(
    req: &Request,
    requested: &[Requested],
    devices: &'a [KpackWheel],
) -> Result<Chosen<'a>> {
    let wanted = |d: &KpackWheel| {
        let have = d.targets();
        requested
            .iter()
            .any(|r| r.targets.iter().any(|t| has_code_for(&have, t)))
    };
    let wheels: Vec<&KpackWheel> = devices.iter().filter(|d| wanted(d)).collect();
    let mut served = BTreeSet::new();
    for d in &wheels {
        served.extend(d.targets());
    }
    for r in requested {
        if !r.targets.iter().any(|t| has_code_for(&served, t)) {
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
    let targets = requested
        .iter()
        .flat_map(|r| r.targets.iter())
        .filter(|t| served.contains(*t))
        .cloned()
        .collect();
    Ok(Chosen { wheels, targets })
}

/// Copies `from` to `to` atomically; nothing to do when they are one file.
fn copy(from: &Path, to: &Path) -> Result<()> {
    if let (Ok(a), Ok(b)) = (from.canonicalize(), to.canonicalize()) {
        if a == b {
            return Ok(());
        }
    }
    atomic_write::AtomicFile::write_with(to, 0o644, |f| {
        let mut src =
            std::fs::File::open(from).with_context(|| format!("opening {}", from.display()))?;
        std::io::copy(&mut src, f)?;
        Ok(())
    })
}
