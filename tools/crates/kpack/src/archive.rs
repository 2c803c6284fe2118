//! `.kpack` archives: the device code of one package for some GPU targets.
//!
//! Layout (integers little-endian): `KPAK`, u32 version 1, u64 offset of the
//! table of contents, zeros up to byte 64, one blob, then the MessagePack
//! table of contents up to the end of the file. The TOC maps a binary key
//! (`<name>#<code object index>`) and a target to the kernel's ordinal and
//! size. The blob is either every kernel back to back (`none`, located by
//! the TOC's `blobs`) or `zstd-per-kernel`: u32 count, then per ordinal a u32
//! length and one zstd frame (level 3, content size recorded).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use atomic_write::AtomicFile;
use serde::Serialize;

use crate::msgpack::{self, Encoder, Value};

pub const MAGIC: &[u8; 4] = b"KPAK";
pub const VERSION: u32 = 1;
/// Where the blob starts (the reference aligns it to 64 bytes).
pub const BLOB_START: u64 = 64;
/// The zstd level the reference compresses kernels with.
pub const ZSTD_LEVEL: i32 = 3;
/// Largest table of contents read (a TOC entry is a few dozen bytes).
pub const MAX_TOC_SIZE: u64 = 64 << 20;
/// Largest kernel read or written (the loader's own limits are 4 GiB blobs).
pub const MAX_KERNEL_SIZE: u64 = 1 << 31;
/// Most kernels in a zstd blob (the loader's limit).
pub const MAX_KERNELS: u64 = 1 << 20;

/// How kernels are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Compression {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "zstd-per-kernel")]
    ZstdPerKernel,
}

impl Compression {
    pub fn scheme(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::ZstdPerKernel => "zstd-per-kernel",
        }
    }

    pub fn from_scheme(s: &str) -> Result<Compression> {
        match s {
            "none" => Ok(Compression::None),
            "zstd-per-kernel" => Ok(Compression::ZstdPerKernel),
            other => bail!("kpack compression scheme {other:?} is not one the loader reads (none, zstd-per-kernel)"),
        }
    }
}

/// One kernel's TOC entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelRef {
    pub ordinal: u64,
    pub original_size: u64,
}

/// The table of contents. `binaries` keeps the file's order.
#[derive(Debug, Clone, Serialize)]
pub struct Toc {
    pub group_name: String,
    pub gfx_arch_family: String,
    pub gfx_arches: Vec<String>,
    pub binaries: Vec<(String, Vec<(String, KernelRef)>)>,
    pub compression: Compression,
}

impl Toc {
    pub fn kernel(&self, key: &str, arch: &str) -> Option<KernelRef> {
        let (_, arches) = self.binaries.iter().find(|(k, _)| k == key)?;
        arches.iter().find(|(a, _)| a == arch).map(|(_, r)| *r)
    }

    pub fn kernel_count(&self) -> usize {
        self.binaries.iter().map(|(_, a)| a.len()).sum()
    }
}

/// An open archive: the TOC in memory, kernels read on demand.
pub struct Archive {
    path: PathBuf,
    file: File,
    pub toc: Toc,
    /// Per ordinal: absolute offset and stored size.
    slots: Vec<(u64, u64)>,
}

impl Archive {
    /// Opens and validates `path`: header, TOC types, every ordinal stored,
    /// and every target of the TOC listed in `gfx_arches` (the loader matches
    /// targets against that list only).
    pub fn open(path: &Path) -> Result<Archive> {
        let mut file =
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = file.metadata()?.len();
        let (toc, slots) = load(&mut file, len, &path.display().to_string())?;
        Ok(Archive {
            path: path.to_path_buf(),
            file,
            toc,
            slots,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The code object of `key` (with its `#<index>`) for `arch`.
    pub fn kernel(&mut self, key: &str, arch: &str) -> Result<Vec<u8>> {
        let Some(r) = self.toc.kernel(key, arch) else {
            bail!("{}: no kernel {key} for {arch}", self.path.display());
        };
        self.read_ordinal(r)
            .with_context(|| format!("{}: kernel {key} for {arch}", self.path.display()))
    }

    fn read_ordinal(&mut self, r: KernelRef) -> Result<Vec<u8>> {
        let (off, size) = self.slots[r.ordinal as usize];
        ensure!(
            size <= MAX_KERNEL_SIZE,
            "stored size {size} exceeds {MAX_KERNEL_SIZE}"
        );
        let mut stored = vec![0u8; size as usize];
        self.file.seek(SeekFrom::Start(off))?;
        self.file.read_exact(&mut stored)?;
        match self.toc.compression {
            Compression::None => Ok(stored),
            Compression::ZstdPerKernel => {
                ensure!(
                    r.original_size <= MAX_KERNEL_SIZE,
                    "original size {} exceeds {MAX_KERNEL_SIZE}",
                    r.original_size
                );
                let out = zstd::bulk::decompress(&stored, r.original_size as usize)
                    .context("zstd frame does not decompress within its original_size")?;
                ensure!(
                    out.len() as u64 == r.original_size,
                    "decompressed to {} bytes, the TOC says {}",
                    out.len(),
                    r.original_size
                );
                Ok(out)
            }
        }
    }
}

/// Reads and validates the header and TOC of an archive of `len` bytes
/// (see [`Archive::open`]); `what` names it in messages.
fn load<R: Read + Seek>(file: &mut R, len: u64, what: &str) -> Result<(Toc, Vec<(u64, u64)>)> {
    let mut head = [0u8; 16];
    file.seek(SeekFrom::Start(0))?;
    if len < 16 {
        bail!("{what}: {len} bytes, too short for a kpack archive (16-byte header)");
    }
    file.read_exact(&mut head)?;
    ensure!(
        &head[..4] == MAGIC,
        "{what}: not a kpack archive (magic {:?}, want KPAK)",
        &head[..4]
    );
    let version = u32::from_le_bytes(head[4..8].try_into().unwrap());
    ensure!(
        version == VERSION,
        "{what}: kpack format version {version}; this tool reads version {VERSION}"
    );
    let toc_offset = u64::from_le_bytes(head[8..16].try_into().unwrap());
    ensure!(
        toc_offset >= 16 && toc_offset < len,
        "{what}: TOC offset {toc_offset} outside the file ({len} bytes)"
    );
    let toc_len = len - toc_offset;
    ensure!(
        toc_len <= MAX_TOC_SIZE,
        "{what}: TOC of {toc_len} bytes exceeds {MAX_TOC_SIZE}"
    );
    let mut raw = vec![0u8; toc_len as usize];
    file.seek(SeekFrom::Start(toc_offset))?;
    file.read_exact(&mut raw)?;
    let (doc, _) = msgpack::decode(&raw).with_context(|| format!("{what}: reading the TOC"))?;
    let (toc, storage) = parse_toc(&doc).with_context(|| format!("{what}: TOC"))?;
    let slots = match storage {
        Storage::Blobs(b) => b,
        Storage::Zstd { offset, size } => zstd_slots(file, offset, size, toc_offset)
            .with_context(|| format!("{what}: zstd blob"))?,
    };
    for (key, arches) in &toc.binaries {
        for (arch, r) in arches {
            ensure!(
                (r.ordinal as usize) < slots.len(),
                "{what}: {key} for {arch} has ordinal {} but the blob holds {} kernels",
                r.ordinal,
                slots.len()
            );
            ensure!(
                toc.gfx_arches.contains(arch),
                "{what}: {key} has code for {arch}, which gfx_arches {:?} does not list (the loader would never find it)",
                toc.gfx_arches
            );
        }
    }
    for &(off, size) in &slots {
        ensure!(
            off.checked_add(size).is_some_and(|end| end <= toc_offset),
            "{what}: a kernel at {off} of {size} bytes overlaps the TOC at {toc_offset}"
        );
    }
    Ok((toc, slots))
}

/// The validated TOC of an archive held in memory (a wheel member).
pub fn toc_of(data: &[u8], what: &str) -> Result<Toc> {
    let mut cursor = std::io::Cursor::new(data);
    Ok(load(&mut cursor, data.len() as u64, what)?.0)
}

enum Storage {
    Blobs(Vec<(u64, u64)>),
    Zstd { offset: u64, size: u64 },
}

fn req<'a>(doc: &'a Value, key: &str) -> Result<&'a Value> {
    doc.get(key).with_context(|| format!("no {key}"))
}

fn req_str(doc: &Value, key: &str) -> Result<String> {
    let v = req(doc, key)?;
    v.as_str()
        .map(String::from)
        .with_context(|| format!("{key} is {}, not a string", v.kind()))
}

fn req_u64(doc: &Value, key: &str) -> Result<u64> {
    let v = req(doc, key)?;
    v.as_u64().with_context(|| {
        format!(
            "{key} is {}, not a non-negative integer (the loader aborts on that)",
            v.kind()
        )
    })
}

fn parse_toc(doc: &Value) -> Result<(Toc, Storage)> {
    let Value::Map(_) = doc else {
        bail!("is {}, not a map", doc.kind())
    };
    let gfx_arches = match req(doc, "gfx_arches")? {
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(String::from)
                    .context("gfx_arches holds a non-string")
            })
            .collect::<Result<Vec<_>>>()?,
        other => bail!("gfx_arches is {}, not an array", other.kind()),
    };
    let Value::Map(entries) = req(doc, "toc")? else {
        bail!("toc is not a map")
    };
    let mut binaries = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = k.as_str().context("a toc key is not a string")?.to_string();
        let Value::Map(per_arch) = v else {
            bail!("toc[{key}] is {}, not a map", v.kind())
        };
        let mut arches = Vec::with_capacity(per_arch.len());
        for (a, e) in per_arch {
            let arch = a
                .as_str()
                .with_context(|| format!("toc[{key}] has a non-string target"))?;
            let r = KernelRef {
                ordinal: req_u64(e, "ordinal").with_context(|| format!("toc[{key}][{arch}]"))?,
                original_size: req_u64(e, "original_size")
                    .with_context(|| format!("toc[{key}][{arch}]"))?,
            };
            arches.push((arch.to_string(), r));
        }
        binaries.push((key, arches));
    }
    let compression = Compression::from_scheme(&req_str(doc, "compression_scheme")?)?;
    let storage = match compression {
        Compression::None => {
            let Value::Array(blobs) = req(doc, "blobs")? else {
                bail!("blobs is not an array")
            };
            Storage::Blobs(
                blobs
                    .iter()
                    .map(|b| Ok((req_u64(b, "offset")?, req_u64(b, "size")?)))
                    .collect::<Result<_>>()?,
            )
        }
        Compression::ZstdPerKernel => Storage::Zstd {
            offset: req_u64(doc, "zstd_offset")?,
            size: req_u64(doc, "zstd_size")?,
        },
    };
    let toc = Toc {
        group_name: req_str(doc, "group_name")?,
        gfx_arch_family: req_str(doc, "gfx_arch_family")?,
        gfx_arches,
        binaries,
        compression,
    };
    Ok((toc, storage))
}

/// Walks the frame lengths of a zstd-per-kernel blob (reading 4 bytes per
/// kernel, never the frames).
fn zstd_slots<R: Read + Seek>(
    file: &mut R,
    offset: u64,
    size: u64,
    toc_offset: u64,
) -> Result<Vec<(u64, u64)>> {
    let end = offset
        .checked_add(size)
        .context("blob offset + size overflows")?;
    ensure!(
        end <= toc_offset && size >= 4,
        "blob at {offset} of {size} bytes does not fit before the TOC"
    );
    let mut word = [0u8; 4];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut word)?;
    let count = u64::from(u32::from_le_bytes(word));
    ensure!(
        count <= MAX_KERNELS,
        "{count} kernels exceed the loader's {MAX_KERNELS}"
    );
    ensure!(
        count * 4 <= size - 4,
        "{count} kernels cannot fit in {size} bytes"
    );
    let mut slots = Vec::with_capacity(count as usize);
    let mut pos = offset + 4;
    for i in 0..count {
        ensure!(pos + 4 <= end, "frame {i} starts past the blob's end");
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut word)?;
        let len = u64::from(u32::from_le_bytes(word));
        ensure!(
            pos + 4 + len <= end,
            "frame {i} of {len} bytes runs past the blob's end"
        );
        slots.push((pos + 4, len));
        pos += 4 + len;
    }
    Ok(slots)
}

/// Builds an archive from code object files; nothing is read before
/// [`ArchiveWriter::write`], which streams one kernel at a time.
pub struct ArchiveWriter {
    pub group_name: String,
    pub gfx_arch_family: String,
    pub gfx_arches: Vec<String>,
    pub compression: Compression,
    /// (key, target, file), in ordinal order.
    kernels: Vec<(String, String, PathBuf)>,
}

impl ArchiveWriter {
    pub fn new(
        group_name: &str,
        gfx_arch_family: &str,
        gfx_arches: &[String],
        compression: Compression,
    ) -> Self {
        ArchiveWriter {
            group_name: group_name.into(),
            gfx_arch_family: gfx_arch_family.into(),
            gfx_arches: gfx_arches.to_vec(),
            compression,
            kernels: Vec::new(),
        }
    }

    /// Adds the code object `file` as `key` (with `#<index>`) for `arch`.
    /// The next ordinal is assigned; the TOC keeps keys in the order first
    /// added, as the reference does.
    pub fn add(&mut self, key: &str, arch: &str, file: &Path) -> Result<()> {
        ensure!(
            self.gfx_arches.iter().any(|a| a == arch),
            "{key}: target {arch} is not among the archive's targets {:?}",
            self.gfx_arches
        );
        ensure!(
            key.rsplit_once('#')
                .is_some_and(|(n, i)| !n.is_empty() && i.parse::<u32>().is_ok()),
            "kpack key {key:?} must be <name>#<code object index>"
        );
        if self.kernels.iter().any(|(k, a, _)| k == key && a == arch) {
            bail!("{key} for {arch} added twice");
        }
        self.kernels.push((key.into(), arch.into(), file.into()));
        Ok(())
    }

    /// Writes the archive atomically to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut out = AtomicFile::create(path)?;
        let f = out.file();
        f.write_all(&[0u8; BLOB_START as usize])?;
        let mut slots = Vec::with_capacity(self.kernels.len());
        let mut sizes = Vec::with_capacity(self.kernels.len());
        if self.compression == Compression::ZstdPerKernel {
            f.write_all(&(self.kernels.len() as u32).to_le_bytes())?;
        }
        let mut pos = f.stream_position()?;
        for (key, arch, file) in &self.kernels {
            let data = read_kernel(file).with_context(|| format!("{key} for {arch}"))?;
            sizes.push(data.len() as u64);
            let stored = match self.compression {
                Compression::None => data,
                Compression::ZstdPerKernel => {
                    let frame = zstd::bulk::compress(&data, ZSTD_LEVEL)?;
                    f.write_all(&(frame.len() as u32).to_le_bytes())?;
                    pos += 4;
                    frame
                }
            };
            f.write_all(&stored)?;
            slots.push((pos, stored.len() as u64));
            pos += stored.len() as u64;
        }
        let toc_offset = pos;
        let toc = self.encode_toc(&slots, &sizes, toc_offset);
        f.write_all(&toc)?;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(MAGIC)?;
        f.write_all(&VERSION.to_le_bytes())?;
        f.write_all(&toc_offset.to_le_bytes())?;
        out.commit(0o644)
    }

    fn encode_toc(&self, slots: &[(u64, u64)], sizes: &[u64], toc_offset: u64) -> Vec<u8> {
        // Keys in first-added order, each with its targets in added order.
        let mut order: Vec<&str> = Vec::new();
        let mut per_key: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
        for (ordinal, (key, arch, _)) in self.kernels.iter().enumerate() {
            if !per_key.contains_key(key.as_str()) {
                order.push(key);
            }
            per_key.entry(key).or_default().push((arch, ordinal));
        }
        // Six common keys, then blobs (none) or zstd_offset and zstd_size.
        let keys = if self.compression == Compression::None {
            7
        } else {
            8
        };
        let mut e = Encoder::default();
        e.map(keys).str("format_version").uint(u64::from(VERSION));
        e.str("group_name").str(&self.group_name);
        e.str("gfx_arch_family").str(&self.gfx_arch_family);
        e.str("gfx_arches").array(self.gfx_arches.len());
        for a in &self.gfx_arches {
            e.str(a);
        }
        e.str("toc").map(order.len());
        for key in order {
            let arches = &per_key[key];
            e.str(key).map(arches.len());
            for &(arch, ordinal) in arches {
                e.str(arch).map(3).str("type").str("hsaco");
                e.str("ordinal").uint(ordinal as u64);
                e.str("original_size").uint(sizes[ordinal]);
            }
        }
        e.str("compression_scheme").str(self.compression.scheme());
        match self.compression {
            Compression::None => {
                e.str("blobs").array(slots.len());
                for &(off, size) in slots {
                    e.map(2).str("offset").uint(off).str("size").uint(size);
                }
            }
            Compression::ZstdPerKernel => {
                e.str("zstd_offset").uint(BLOB_START);
                e.str("zstd_size").uint(toc_offset - BLOB_START);
            }
        }
        e.buf
    }
}

fn read_kernel(file: &Path) -> Result<Vec<u8>> {
    let len = std::fs::metadata(file)
        .with_context(|| format!("cannot read {}", file.display()))?
        .len();
    ensure!(
        len <= MAX_KERNEL_SIZE,
        "{}: {len} bytes exceed {MAX_KERNEL_SIZE}",
        file.display()
    );
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}
