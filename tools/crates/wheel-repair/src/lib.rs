//! `rocm-wheel repair`: fixes what a ROCm wheel's build leaves behind,
//! without bundling anything (auditwheel's `repair` grafts the ROCm
//! runtime into the wheel, or refuses). See README.md for the rules.
//!
//! The wheel is opened once: [`plan`] reads the checker's model of it
//! ([`manylinux_check`]) and judges every ELF file's DT_RUNPATH / DT_RPATH
//! on it, sets
//! `Root-Is-Purelib: false` for native code, picks the platform tag and
//! runs the checker on the model as repaired: any error left is a refusal
//! before anything is written. [`apply`] then writes it from the same open
//! wheel: elf-edit edits only the dynamic strings, the wheel rewriter
//! copies every other member as its compressed bytes.

mod apply;
mod entries;
mod plan;
mod report;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

pub use entries::Reason;
pub use report::{Change, CheckSummary, ElfChange, Entry, Report, SCHEMA_VERSION};

/// Repairs `input` into `output`: a file named as the repaired wheel, or
/// an existing directory to write it into. `plat`: the platform tag to
/// meet (`manylinux_2_28_x86_64`, `manylinux2014`, …); default the claimed
/// manylinux tag if the wheel meets it, else the most compatible one it
/// meets. A wheel that needs nothing is copied byte for byte.
pub fn repair(input: &Path, output: &Path, plat: Option<&str>) -> Result<Report> {
    let (mut plan, wheel) = plan::plan(input, plat)?;
    let output = output_path(output, &plan.output_name)?;
    let scratch = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    apply::write(wheel, &mut plan, &output, &scratch)?;
    Ok(report(input, &output, plan))
}

/// `output`, or the repaired wheel's name in it if it is a directory;
/// a file name other than the wheel's is refused (pip checks it).
fn output_path(output: &Path, name: &str) -> Result<PathBuf> {
    if output.is_dir() {
        return Ok(output.join(name));
    }
    let given = atomic_write::target_name(output)?;
    if given != name {
        bail!(
            "-o {}: the repaired wheel must be named {name} (pip checks that the file name \
             matches the wheel's name, version and tags); give that name or a directory",
            output.display()
        );
    }
    Ok(output.to_path_buf())
}

fn report(input: &Path, output: &Path, plan: plan::Plan) -> Report {
    let changed = plan.changes_anything();
    let purelib_after = if plan.set_platlib {
        Some(false)
    } else {
        plan.purelib_before
    };
    let tags_after = match &plan.retag {
        Some(_) => plan.check.claimed_platform_tags.clone(),
        None => plan.tags_before.clone(),
    };
    Report {
        schema_version: SCHEMA_VERSION,
        input: input.display().to_string(),
        output: output.display().to_string(),
        changed,
        platform_tags: Change {
            before: plan.tags_before,
            after: tags_after,
        },
        root_is_purelib: Change {
            before: plan.purelib_before,
            after: purelib_after,
        },
        proven_platform_tag: plan.check.platform_tag.clone(),
        elfs: plan.elfs,
        check: CheckSummary {
            warnings: plan.check.summary.warnings,
            infos: plan.check.summary.infos,
        },
        findings: plan.findings,
    }
}
