//! Planning a thinning: the output's name, the members with device code
//! (unpacked), and the refusals. Nothing is written but the temporary
//! files.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use atomic_write::ScratchFile;
use gfx_targets::{describe_target, expand, gfx_sort_key, has_code_for, Requested};
use offload_bundle::thin::{find_hip_fatbin, read_hip_fatbin, section_targets};
use offload_bundle::Limits;
use wheel_rewrite::WheelRewriter;

use crate::Request;

/// What a thinning will do.
pub struct Plan {
    pub wheel: WheelRewriter,
    /// The gfx targets whose code objects stay.
    pub keep: BTreeSet<String>,
    /// The members with device code, in member order.
    pub members: Vec<Unpacked>,
    pub limits: Limits,
}

/// An ELF member whose bundles hold device code, unpacked.
pub struct Unpacked {
    pub name: String,
    pub file: ScratchFile,
    /// File offset and size of its `.hip_fatbin`.
    pub section: (u64, u64),
    targets: Vec<Vec<String>>,
}

/// Plans the thinning `req` asks for.
pub fn plan(req: &Request) -> Result<Plan> {
    let requested = expand(req.gfx)?;
    let keep: BTreeSet<String> = requested
        .iter()
        .flat_map(|r| r.targets.iter().cloned())
        .collect();
    let mut wheel = WheelRewriter::open(req.input)?;
    if let Some(s) = req.name_suffix {
        let new_name = format!("{}-{s}", wheel.name());
        wheel
            .rename(&new_name)
            .context("--name-suffix gives an invalid name")?;
    }
    let expected_file = wheel.output_file_name()?;
    if atomic_write::target_name(req.output)? != expected_file {
        bail!(
            "-o {}: the output must be named {expected_file} (pip checks that the file name \
             matches the wheel's name and version)",
            req.output.display()
        );
    }
    let out_dir = atomic_write::target_dir(req.output);
    let limits = Limits::default();
    let members = unpack_device_code(&mut wheel, out_dir, &limits)?;
    check_requested(req, &requested, wheel.file_name(), &members)?;
    Ok(Plan {
        wheel,
        keep,
        members,
        limits,
    })
}

/// Unpacks the ELF members whose `.hip_fatbin` holds device code into
/// temporary files in `out_dir`, in member order, with their targets.
fn unpack_device_code(
    wheel: &mut WheelRewriter,
    out_dir: &Path,
    limits: &Limits,
) -> Result<Vec<Unpacked>> {
    let mut unpacked = Vec::new();
    for i in 0..wheel.names().len() {
        let Some(mut file) = wheel.unpack_if(i, b"\x7fELF", out_dir)? else {
            continue;
        };
        let name = wheel.names()[i].clone();
        let f = file.as_file_mut();
        let Some(section) = find_hip_fatbin(f).with_context(|| name.clone())? else {
            continue;
        };
        let data = read_hip_fatbin(f, section)?;
        let targets = section_targets(&data, limits)
            .with_context(|| format!("{name}: reading .hip_fatbin"))?;
        if targets.iter().any(|t| !t.is_empty()) {
            unpacked.push(Unpacked {
                name,
                file,
                section,
                targets,
            });
        }
    }
    Ok(unpacked)
}

/// Refuses a wheel without device code, and a requested family or target
/// of which the wheel holds no code (naming what it has).
fn check_requested(
    req: &Request,
    requested: &[Requested],
    input_name: &str,
    unpacked: &[Unpacked],
) -> Result<()> {
    let mut present: BTreeSet<String> = BTreeSet::new();
    for u in unpacked {
        for t in u.targets.iter().flatten() {
            present.insert(t.split(':').next().unwrap_or_default().to_string());
        }
    }
    if present.is_empty() {
        if kpack::wheel::read(req.input).is_ok_and(|w| !w.binaries.is_empty()) {
            bail!(
                "{}: a kpack host wheel: its binaries hold markers, its device code is in device \
                 wheels; thin the set by choosing them: --device-wheel <each device wheel>",
                req.input.display()
            );
        }
        bail!(
            "{}: no member holds GPU code (no ELF file with offload bundles in .hip_fatbin); \
             there is nothing to thin",
            req.input.display()
        );
    }
    let mut have: Vec<&String> = present.iter().collect();
    have.sort_by_key(|t| gfx_sort_key(t));
    let have = have
        .iter()
        .map(|s| describe_target(s))
        .collect::<Vec<_>>()
        .join(", ");
    for r in requested {
        if !r.targets.iter().any(|t| has_code_for(&present, t)) {
            let what = if r.family {
                format!("family {} ({})", r.name, r.targets.join(", "))
            } else {
                format!("target {}", r.name)
            };
            bail!(
                "--gfx {}: no bundle of {input_name} holds code for {what}; the wheel has code \
                 for {have}",
                req.gfx
            );
        }
    }
    Ok(())
}
