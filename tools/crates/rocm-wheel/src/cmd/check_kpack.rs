//! `rocm-wheel check --device-wheel …`: whether a kpack host wheel's device
//! code resolves once it is installed with its device wheels, the way
//! rocm-kpack's loader resolves it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use kpack::wheel::{check_members, check_set, installed_once, read, read_devices, KpackWheel};

use manylinux_check::{EXIT_CLEAN, EXIT_FINDINGS};

/// Checks `wheel` with `device_wheels` for `gfx` (or the targets their
/// archives serve); prints each problem; returns the exit code.
pub fn run(
    wheel: &Path,
    device_wheels: &[PathBuf],
    gfx: Option<&str>,
    out: &mut dyn Write,
) -> Result<i32> {
    let host = read(wheel)?;
    let devices = read_devices(device_wheels, "check")?;
    if host.binaries.is_empty() {
        bail!(
            "{}: no binary refers to kpack archives (HIPK wrappers); nothing to check",
            wheel.display()
        );
    }
    check_members(&host, &devices)?;
    let targets: Vec<String> = match gfx {
        Some(value) => gfx_targets::expand(value)?
            .into_iter()
            .flat_map(|r| r.targets)
            .collect(),
        None => devices
            .iter()
            .chain([&host])
            .flat_map(|w| w.targets())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    if targets.is_empty() {
        bail!("no GPU target to check: give the device wheels (--device-wheel) or the targets (--gfx)");
    }
    let device_refs: Vec<&KpackWheel> = devices.iter().collect();
    installed_once(&host, &device_refs)?;
    let problems = check_set(&host, &device_refs, &targets);
    for p in &problems {
        writeln!(out, "error: {p}")?;
    }
    for line in kpack::missing_groups(&problems) {
        writeln!(out, "error: {line}")?;
    }
    if problems.is_empty() {
        let wrappers: usize = host.binaries.iter().map(|(_, r)| r.len()).sum();
        let archives =
            host.archives.len() + devices.iter().map(|d| d.archives.len()).sum::<usize>();
        writeln!(
            out,
            "ok: {wrappers} kpack references in {} binaries resolve for {} in {archives} archive(s)",
            host.binaries.len(),
            targets.join(","),
        )?;
        Ok(EXIT_CLEAN)
    } else {
        Ok(EXIT_FINDINGS)
    }
}
