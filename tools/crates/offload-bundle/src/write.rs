//! Writing bundles the way `clang-offload-bundler -type=o` does for HIP.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::{amdgpu, md5_low, Method, BUNDLE_ALIGN, CCOB_MAGIC, MAGIC};

/// How to store the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    /// A `CCOB` bundle of the given format version (2 or 3).
    Compressed {
        method: Method,
        version: u16,
        /// Compression level; `None` picks LLVM's defaults (zstd 3, zlib 6).
        level: Option<i32>,
    },
}

/// The id clang gives the (empty) host entry, e.g.
/// `host-x86_64-unknown-linux-gnu-`.
pub fn host_entry_id(host_triple: &str) -> String {
    format!("host-{host_triple}-")
}

/// Builds an uncompressed bundle: the host entry (empty) first, then the
/// device entries sorted by id, each aligned to [`BUNDLE_ALIGN`] — the order
/// and layout clang's HIP driver produces, so equal inputs give equal bytes.
pub fn build_uncompressed(host_triple: &str, devices: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut devs: Vec<&(String, Vec<u8>)> = devices.iter().collect();
    devs.sort_by(|a, b| a.0.cmp(&b.0));
    for w in devs.windows(2) {
        if w[0].0 == w[1].0 {
            bail!(
                "entry id `{}` is given twice; each target may appear once",
                w[0].0
            );
        }
    }
    let host_id = host_entry_id(host_triple);
    let mut entries: Vec<(&str, &[u8])> = vec![(host_id.as_str(), &[])];
    entries.extend(devs.iter().map(|(id, d)| (id.as_str(), d.as_slice())));
    Ok(layout_uncompressed(&entries))
}

/// Lays out an uncompressed bundle of `entries` in the given order, each
/// entry's data aligned to [`BUNDLE_ALIGN`].
pub(crate) fn layout_uncompressed(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let header_len: u64 = MAGIC.len() as u64
        + 8
        + entries
            .iter()
            .map(|(id, _)| 24 + id.len() as u64)
            .sum::<u64>();
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut offsets = Vec::with_capacity(entries.len());
    let mut next = header_len;
    for (id, data) in entries {
        let off = next.div_ceil(BUNDLE_ALIGN) * BUNDLE_ALIGN;
        offsets.push(off);
        next = off + data.len() as u64;
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, data), off) in entries.iter().zip(&offsets) {
        out.resize(*off as usize, 0);
        out.extend_from_slice(data);
    }
    out
}

/// Refuses a level the method does not have. zstd itself would take 0 and
/// negative levels (its default and "fast" modes) and clamp levels above 22,
/// so a typo would silently give another level than asked for.
fn check_level(method: Method, level: Option<i32>) -> Result<()> {
    let range = match method {
        Method::Zstd => 1..=22,
        Method::Zlib => 0..=9,
    };
    match level {
        Some(l) if !range.contains(&l) => bail!(
            "{} compression level {l} is out of range {}..={}",
            method.name(),
            range.start(),
            range.end()
        ),
        _ => Ok(()),
    }
}

/// Wraps an uncompressed bundle into a `CCOB` bundle.
pub fn compress(
    bundle: &[u8],
    method: Method,
    version: u16,
    level: Option<i32>,
) -> Result<Vec<u8>> {
    if !bundle.starts_with(MAGIC) {
        bail!("only uncompressed offload bundles can be compressed");
    }
    check_level(method, level)?;
    let stream = match method {
        Method::Zstd => {
            let mut c = zstd::bulk::Compressor::new(level.unwrap_or(3))
                .context("cannot set up zstd compression (bad --level?)")?;
            // LLVM compresses with long-distance matching: bundles repeat
            // large parts across targets.
            c.long_distance_matching(true)
                .context("cannot enable zstd long-distance matching")?;
            c.include_contentsize(true).context("zstd parameters")?;
            c.compress(bundle).context("zstd compression failed")?
        }
        Method::Zlib => {
            let lvl = level.unwrap_or(6);
            let mut e =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(lvl as u32));
            e.write_all(bundle).context("zlib compression failed")?;
            e.finish().context("zlib compression failed")?
        }
    };
    let hash = md5_low(bundle);
    let mut out = Vec::with_capacity(stream.len() + 32);
    out.extend_from_slice(CCOB_MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&method.raw().to_le_bytes());
    match version {
        // Version 1 records no total size; readers find the next bundle.
        1 => {
            let Ok(usize32) = u32::try_from(bundle.len()) else {
                bail!("bundle too large for compressed format version 1 (4 GiB limit)");
            };
            out.extend_from_slice(&usize32.to_le_bytes());
        }
        2 => {
            let total = 24 + stream.len() as u64;
            let (Ok(total), Ok(usize32)) = (u32::try_from(total), u32::try_from(bundle.len()))
            else {
                bail!(
                    "bundle too large for compressed format version 2 (4 GiB limit); use --format-version 3"
                );
            };
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&usize32.to_le_bytes());
        }
        3 => {
            let total = 32 + stream.len() as u64;
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u64).to_le_bytes());
        }
        v => bail!("compressed bundle format version {v} cannot be written; use 1, 2 or 3"),
    }
    out.extend_from_slice(&hash.to_le_bytes());
    out.extend_from_slice(&stream);
    Ok(out)
}

/// A request to write one bundle file from code objects on disk.
#[derive(Debug, Clone)]
pub struct WriteRequest {
    pub output: PathBuf,
    pub host_triple: String,
    /// `(entry id, code object path)`.
    pub entries: Vec<(String, PathBuf)>,
    pub compression: Compression,
}

/// Validates every input (AMDGPU code object matching its entry id), builds
/// the bundle and writes it atomically: on error no output file exists.
pub fn write_bundle_file(req: &WriteRequest) -> Result<()> {
    if req.host_triple.is_empty() || req.host_triple.contains(char::is_whitespace) {
        bail!(
            "host triple `{}` is not a target triple such as x86_64-unknown-linux-gnu",
            req.host_triple
        );
    }
    if req.entries.is_empty() {
        bail!("no --entry given; a bundle needs at least one ID=CODE_OBJECT entry");
    }
    // Before any code object is read: a bad level is a usage error.
    if let Compression::Compressed { method, level, .. } = req.compression {
        check_level(method, level)?;
    }
    let mut devices: Vec<(String, Vec<u8>)> = Vec::with_capacity(req.entries.len());
    let mut keys = Vec::with_capacity(req.entries.len());
    for (id, path) in &req.entries {
        amdgpu::validate_device_id(id)?;
        let data = std::fs::read(path).with_context(|| {
            format!(
                "cannot read code object {} for entry `{id}`",
                path.display()
            )
        })?;
        amdgpu::check_code_object(id, &data, &path.display().to_string())?;
        let key = amdgpu::target_key(id);
        if let Some(i) = keys.iter().position(|k| *k == key) {
            let other = &devices[i].0;
            if other == id {
                bail!("entry id `{id}` is given twice; each target may appear once");
            }
            bail!(
                "entry ids `{other}` and `{id}` name the same target (features in another \
                 order); each target may appear once"
            );
        }
        keys.push(key);
        devices.push((id.clone(), data));
    }
    let bundle = build_uncompressed(&req.host_triple, &devices)?;
    let bytes = match req.compression {
        Compression::None => bundle,
        Compression::Compressed {
            method,
            version,
            level,
        } => compress(&bundle, method, version, level)?,
    };
    write_atomically(&req.output, &bytes)
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a
/// rename, so readers never see a partial file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_write::write_bytes(path, bytes, 0o644)
}
