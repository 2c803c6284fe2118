//! The kpack side of wheels: each binary's `HIPK` wrappers and each
//! `.kpack` archive's table of contents, read from the zip members (copied
//! to temporary files, one at a time: a plugin can be hundreds of MB); and
//! whether a host wheel resolves among its device wheels' archives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::{check_binary, host_refs, Archive, Problem, Toc, WrapperRef};

/// What a wheel holds of kpack: binaries with wrappers, and archives.
pub struct KpackWheel {
    pub path: PathBuf,
    /// Member path -> its wrappers (only binaries that have some).
    pub binaries: Vec<(String, Vec<WrapperRef>)>,
    /// Member path -> the archive's table of contents.
    pub archives: BTreeMap<String, Toc>,
}

impl KpackWheel {
    /// The gfx targets its archives serve.
    pub fn targets(&self) -> BTreeSet<String> {
        self.archives
            .values()
            .flat_map(|toc| toc.gfx_arches.iter().cloned())
            .collect()
    }

    /// The file name (for messages and copies).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

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

/// Reads the wrappers of every binary of `wheel` and its archives' TOCs.
pub fn read(wheel: &Path) -> Result<KpackWheel> {
    let reader = wheel_read::WheelReader::open(wheel).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (_, mut zip, names, _) = reader.into_archive();
    let mut out = KpackWheel {
        path: wheel.to_path_buf(),
        binaries: Vec::new(),
        archives: BTreeMap::new(),
    };
    for name in names.iter().filter(|n| !n.ends_with('/')) {
        if name.ends_with(".kpack") {
            let tmp = member_file(&mut zip, name)?;
            let ar = Archive::open(tmp.path())
                .with_context(|| format!("{}: {name}", wheel.display()))?;
            out.archives.insert(name.clone(), ar.toc.clone());
        } else if is_binary(name) {
            let tmp = member_file(&mut zip, name)?;
            let src = elf_read::FileSource::new(tmp.reopen()?)?;
            let mut magic = [0u8; 4];
            if src.len < 4
                || elf_read::ReadAt::read_exact_at(&src, &mut magic, 0).is_err()
                || &magic != elf_read::raw::ELFMAG
            {
                continue;
            }
            let refs = host_refs(&src).with_context(|| format!("{}: {name}", wheel.display()))?;
            if !refs.is_empty() {
                out.binaries.push((name.clone(), refs));
            }
        }
    }
    Ok(out)
}

/// Reads each device wheel of a set; refuses one holding host binaries
/// (a host wheel given in its place), saying to give it as the wheel to
/// `role` (check, thin).
pub fn read_devices(paths: &[PathBuf], role: &str) -> Result<Vec<KpackWheel>> {
    let devices = paths.iter().map(|d| read(d)).collect::<Result<Vec<_>>>()?;
    if let Some(d) = devices.iter().find(|d| !d.binaries.is_empty()) {
        anyhow::bail!(
            "{}: holds host binaries with kpack markers, not device code; give it as the wheel to {role}",
            d.path.display()
        );
    }
    Ok(devices)
}

/// Every wrapper of `host` checked for every target in `targets` against
/// the archives of `host` and `devices` installed together.
pub fn check_set(host: &KpackWheel, devices: &[&KpackWheel], targets: &[String]) -> Vec<Problem> {
    let mut archives = host.archives.clone();
    for d in devices {
        archives.extend(d.archives.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    host.binaries
        .iter()
        .flat_map(|(binary, refs)| check_binary(binary, refs, &archives, targets))
        .collect()
}
