//! `rocm-wheel check --device-wheel …`: whether a kpack host wheel's device
//! code resolves once it is installed with its device wheels, the way
//! rocm-kpack's loader resolves it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kpack::{check_binary, host_refs, Archive, Toc, WrapperRef};

use manylinux_check::{EXIT_CLEAN, EXIT_FINDINGS};

/// One member copied to a temporary file (disk, not memory: a plugin can
/// be hundreds of MB).
fn member_file(zip: &mut wheel_read::Archive, name: &str) -> Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::NamedTempFile::new().context("creating a temporary file")?;
    let mut m = zip
        .by_name(name)
        .with_context(|| format!("reading {name}"))?;
    std::io::copy(&mut m, tmp.as_file_mut()).with_context(|| format!("unpacking {name}"))?;
    Ok(tmp)
}

fn is_binary(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    (base.ends_with(".so") || base.contains(".so.")) && !name.contains(".data/")
}

/// The wrappers of every binary in `wheel`, and its archives (member path ->
/// TOC) into `archives`.
fn read_wheel(
    wheel: &Path,
    archives: &mut BTreeMap<String, Toc>,
) -> Result<Vec<(String, Vec<WrapperRef>)>> {
    let reader = wheel_read::WheelReader::open(wheel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (_, mut zip, names, _) = reader.into_archive();
    let mut binaries = Vec::new();
    for name in names.iter().filter(|n| !n.ends_with('/')) {
        if name.ends_with(".kpack") {
            let tmp = member_file(&mut zip, name)?;
            let ar = Archive::open(tmp.path())
                .with_context(|| format!("{}: {name}", wheel.display()))?;
            archives.insert(name.clone(), ar.toc.clone());
        } else if is_binary(name) {
            let tmp = member_file(&mut zip, name)?;
            let src = elf_read::FileSource::new(tmp.reopen()?)?;
            let mut magic = [0u8; 4];
            if src.len < 4
                || elf_read::ReadAt::read_exact_at(&src, &mut magic, 0).is_err()
                || &magic != b"\x7fELF"
            {
                continue;
            }
            let refs = host_refs(&src).with_context(|| format!("{}: {name}", wheel.display()))?;
            if !refs.is_empty() {
                binaries.push((name.clone(), refs));
            }
        }
    }
    Ok(binaries)
}

/// Checks `wheel` with `device_wheels` for `gfx` (or the targets their
/// archives serve); prints each problem; returns the exit code.
pub fn run(
    wheel: &Path,
    device_wheels: &[PathBuf],
    gfx: Option<&str>,
    out: &mut dyn Write,
) -> Result<i32> {
    let mut archives = BTreeMap::new();
    let binaries = read_wheel(wheel, &mut archives)?;
    for d in device_wheels {
        let more = read_wheel(d, &mut archives)?;
        if !more.is_empty() {
            bail!(
                "{}: holds host binaries with kpack markers; give it as the wheel to check",
                d.display()
            );
        }
    }
    if binaries.is_empty() {
        bail!(
            "{}: no binary refers to kpack archives (HIPK wrappers); nothing to check",
            wheel.display()
        );
    }
    let targets: Vec<String> = match gfx {
        Some(value) => offload_bundle::families::expand(value)?
            .into_iter()
            .flat_map(|r| r.targets)
            .collect(),
        None => {
            let mut t: Vec<String> = archives
                .values()
                .flat_map(|toc| toc.gfx_arches.iter().cloned())
                .collect();
            t.sort();
            t.dedup();
            t
        }
    };
    if targets.is_empty() {
        bail!("no GPU target to check: give the device wheels (--device-wheel) or the targets (--gfx)");
    }
    let mut problems = Vec::new();
    let mut wrappers = 0;
    for (binary, refs) in &binaries {
        wrappers += refs.len();
        problems.extend(check_binary(binary, refs, &archives, &targets));
    }
    for p in &problems {
        writeln!(out, "error: {p}")?;
    }
    if problems.is_empty() {
        writeln!(
            out,
            "ok: {wrappers} kpack references in {} binaries resolve for {} in {} archive(s)",
            binaries.len(),
            targets.join(","),
            archives.len()
        )?;
        Ok(EXIT_CLEAN)
    } else {
        Ok(EXIT_FINDINGS)
    }
}
