//! Writing a planned repair: each ELF file whose search path changes is
//! unpacked to a temporary file next to the output and edited in place by
//! elf-edit (only `.dynstr` and the dynamic array change, or a segment is
//! appended); WHEEL gets `Root-Is-Purelib: false` and the new tags; the
//! wheel rewriter copies every other member as its compressed bytes and
//! rewrites RECORD. The output appears atomically or not at all.

use std::path::Path;

use anyhow::{bail, Context, Result};
use atomic_write::ScratchFile;
use elf_edit::{Edit, Method, RpathKind};
use wheel_format::{dist_info_path, find_dist_info, set_wheel_field};
use wheel_read::WheelReader;
use wheel_rewrite::{Source, WheelRewriter};

use crate::plan::Plan;
use crate::report::ElfChange;

/// Writes the repaired wheel `output` as `plan` says; fills in how each
/// ELF file was edited.
pub fn write(input: WheelReader, plan: &mut Plan, output: &Path, scratch: &Path) -> Result<()> {
    if !plan.changes_anything() {
        return copy(input, output);
    }
    let mut wheel = WheelRewriter::new(input)?;
    if let Some(tags) = &plan.retag {
        wheel.retag(tags)?;
    }
    if wheel.output_file_name()? != plan.output_name {
        bail!(
            "internal error: the rewriter names the output {}, the plan {}",
            wheel.output_file_name()?,
            plan.output_name
        );
    }
    if plan.set_platlib {
        set_platlib(&mut wheel)?;
    }
    // Kept until `finish` read them: each is deleted when dropped.
    let mut temps = Vec::new();
    for change in &mut plan.elfs {
        let (temp, method) = edit_member(&mut wheel, change, scratch)?;
        change.method = Some(match method {
            Method::Unchanged => "unchanged",
            Method::InPlace => "in-place",
            Method::Appended { .. } => "appended",
        });
        wheel.replace(&change.path, Source::File(temp.reopen()?))?;
        temps.push(temp);
    }
    wheel.finish(output)
}

/// A wheel that needs no repair: the output is a byte copy.
fn copy(input: WheelReader, output: &Path) -> Result<()> {
    let shown = input.path().display().to_string();
    let mut src = input
        .into_file()
        .with_context(|| format!("cannot read {shown}"))?;
    atomic_write::AtomicFile::write_with(output, 0o644, |out| {
        std::io::copy(&mut src, out)?;
        Ok(())
    })
}

/// WHEEL with `Root-Is-Purelib: false`, as a replacement.
fn set_platlib(wheel: &mut WheelRewriter) -> Result<()> {
    let dist = find_dist_info(wheel.names().iter().map(String::as_str))?;
    let member = dist_info_path(&dist, "WHEEL");
    let text = wheel.read_text(&member)?;
    let text = set_wheel_field(&text, "Root-Is-Purelib", "false");
    wheel.replace(&member, Source::Bytes(text.into_bytes()))
}

/// Unpacks `change.path` into a temporary file in `scratch` and sets its
/// search path there; refuses a file whose search path is not the one the
/// plan was made from.
fn edit_member(
    wheel: &mut WheelRewriter,
    change: &ElfChange,
    scratch: &Path,
) -> Result<(ScratchFile, Method)> {
    let name = &change.path;
    let temp = wheel.unpack(name, scratch)?;
    let old: Vec<String> = elf_edit::read_rpath(temp.path())
        .with_context(|| format!("{name}: reading its search path"))?
        .iter()
        .map(|e| e.value_lossy())
        .collect();
    let planned: Vec<String> = change.entries.iter().map(|e| e.value.clone()).collect();
    if !old.iter().any(|v| *v == planned.join(":")) {
        bail!("{name}: its search path {old:?} is not the one the check read ({planned:?}); the wheel changed while it was read, or the entries are not UTF-8");
    }
    let edit = if change.after.is_empty() {
        Edit::Remove
    } else {
        let kind = match change.kind {
            "DT_RPATH" => RpathKind::Rpath,
            _ => RpathKind::Runpath,
        };
        Edit::Set {
            rpath: change.after.join(":").into_bytes(),
            kind,
        }
    };
    let method = elf_edit::edit_file(temp.path(), None, &edit).with_context(|| name.clone())?;
    Ok((temp, method))
}
