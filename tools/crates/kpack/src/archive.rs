//! `.kpack` archives: the device code of one package for some GPU targets.
//!
//! Layout (integers little-endian): `KPAK`, u32 version 1, u64 offset of the
//! table of contents, zeros up to byte 64, one blob, then the MessagePack
//! table of contents up to the end of the file. The TOC maps a binary key
//! (`<name>#<code object index>`) and a target to the kernel's ordinal and
//! size. The blob is either every kernel back to back (`none`, located by
//! the TOC's `blobs`) or `zstd-per-kernel`: u32 count, then per ordinal a u32
//! length and one zstd frame (level 3, content size recorded).

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use atomic_write::AtomicFile;
use serde::Serialize;

use crate::msgpack::{self, Budget, Encoder, Value};

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

/// One TOC key (`<name>#<index>`) with its kernel per target.
pub type Binary = (String, Vec<(String, KernelRef)>);

/// The table of contents. `binaries` keeps the file's order.
#[derive(Debug, Clone, Serialize)]
pub struct Toc {
    pub group_name: String,
    pub gfx_arch_family: String,
    pub gfx_arches: Vec<String>,
    pub binaries: Vec<Binary>,
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

    /// The listing of archive `name`: a line of what it is, then one per
    /// kernel and target with its size.
    pub fn describe(&self, name: &str) -> String {
        let mut out = format!(
            "{name}: group {}, family {}, targets {}, {} kernels ({})\n",
            self.group_name,
            self.gfx_arch_family,
            self.gfx_arches.join(","),
            self.kernel_count(),
            self.compression.scheme()
        );
        for (key, arches) in &self.binaries {
            for (arch, r) in arches {
                out.push_str(&format!("  {key} {arch} {} bytes\n", r.original_size));
            }
        }
        out
    }
}

/// A `--kernel` argument, `KEY@TARGET=FILE` (`pkg/_hip/lib/a.hip#0@gfx1201=a.gfx1201.co`):
/// the code object FILE as archive key KEY for TARGET.
pub fn parse_kernel_spec(spec: &str) -> Result<(&str, &str, &Path)> {
    let parsed = (spec.split_once('='))
        .and_then(|(kt, file)| kt.rsplit_once('@').map(|(k, t)| (k, t, Path::new(file))));
    parsed.with_context(|| {
        format!("--kernel {spec:?}: want KEY@TARGET=FILE, e.g. pkg/_hip/lib/a.hip#0@gfx1201=a.gfx1201.co")
    })
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
    /// every target of the TOC listed in `gfx_arches` (the loader matches
    /// targets against that list only), and every kernel's stored form
    /// (see [`toc_from`]).
    pub fn open(path: &Path) -> Result<Archive> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut src = SeekSource(file);
        let (toc, slots) = load(&mut src, &path.display().to_string())?;
        Ok(Archive {
            path: path.to_path_buf(),
            file: src.0,
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

/// Where an archive's bytes come from. Reading is front to back from a
/// given offset, so an archive inside a zip member is read in a few
/// streaming passes, never copied out.
pub trait Source {
    /// A reader positioned at byte `pos` (reading ends at the archive's end).
    fn read_from(&mut self, pos: u64) -> Result<Box<dyn Read + '_>>;
}

/// A seekable archive (a file, or bytes in memory).
pub struct SeekSource<R>(pub R);

impl<R: Read + Seek> Source for SeekSource<R> {
    fn read_from(&mut self, pos: u64) -> Result<Box<dyn Read + '_>> {
        self.0.seek(SeekFrom::Start(pos))?;
        Ok(Box::new(&mut self.0))
    }
}

/// Reads up to `buf.len()` bytes; fewer only at the end.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// The TOC offset and the TOC's bytes (from there to the end), after the
/// header is checked.
fn read_toc(src: &mut dyn Source, what: &str) -> Result<(u64, Vec<u8>)> {
    let mut head = [0u8; 16];
    let got = read_full(&mut *src.read_from(0)?, &mut head)?;
    if got < 16 {
        bail!("{what}: {got} bytes, too short for a kpack archive (16-byte header)");
    }
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
        toc_offset >= 16,
        "{what}: TOC offset {toc_offset} is inside the 16-byte header"
    );
    let mut raw = Vec::new();
    {
        let r = src.read_from(toc_offset).with_context(|| {
            format!("{what}: TOC offset {toc_offset} is past the end of the file")
        })?;
        r.take(MAX_TOC_SIZE + 1).read_to_end(&mut raw)?;
        // Past the end of the file, a seekable source reads nothing.
        ensure!(
            !raw.is_empty(),
            "{what}: TOC offset {toc_offset} is at or past the end of the file"
        );
        ensure!(
            raw.len() as u64 <= MAX_TOC_SIZE,
            "{what}: TOC of more than {MAX_TOC_SIZE} bytes (from {toc_offset} to the end)"
        );
    }
    Ok((toc_offset, raw))
}

/// Reads and validates the header and TOC of an archive (see
/// [`Archive::open`] and [`toc_from`]); `what` names it in messages.
/// Memory: the TOC's bytes (at most [`MAX_TOC_SIZE`]), its typed form (at
/// most [`TOC_DECODE_FACTOR`] times those bytes), 8 bytes per kernel and
/// one zstd window; never a kernel or the blob.
fn load(src: &mut dyn Source, what: &str) -> Result<(Toc, Vec<(u64, u64)>)> {
    let (toc_offset, raw) = read_toc(src, what)?;
    let (doc, _) = msgpack::decode(&raw).with_context(|| format!("{what}: reading the TOC"))?;
    let (toc, storage) = parse_toc(doc, raw.len()).with_context(|| format!("{what}: TOC"))?;
    drop(raw);
    let slots = match storage {
        Storage::Blobs(b) => b,
        Storage::Zstd { offset, size } => zstd_slots(src, offset, size, toc_offset)
            .with_context(|| format!("{what}: zstd blob"))?,
    };
    let sizes = claimed_sizes(&toc, slots.len(), what)?;
    for (i, &(off, size)) in slots.iter().enumerate() {
        ensure!(
            off.checked_add(size).is_some_and(|end| end <= toc_offset),
            "{what}: a kernel at {off} of {size} bytes overlaps the TOC at {toc_offset}"
        );
        if toc.compression == Compression::None && sizes[i] != UNUSED {
            ensure!(
                size == sizes[i],
                "{what}: kernel {i} is stored in {size} bytes but the TOC says {}",
                sizes[i]
            );
        }
    }
    if toc.compression == Compression::ZstdPerKernel {
        verify_frames(src, &slots, &sizes).with_context(|| format!("{what}: zstd blob"))?;
    }
    Ok((toc, slots))
}

/// Per stored ordinal, the size the TOC claims for it ([`UNUSED`] if no
/// entry names it), after checking each entry: ordinal stored, target
/// listed, size bounded, one size per ordinal, the total bounded.
fn claimed_sizes(toc: &Toc, stored: usize, what: &str) -> Result<Vec<u64>> {
    // The size each stored ordinal must decode to (the TOC's claim).
    let mut sizes = vec![UNUSED; stored];
    let mut total: u64 = 0;
    let targets: HashSet<&str> = toc.gfx_arches.iter().map(String::as_str).collect();
    for (key, arches) in &toc.binaries {
        for (arch, r) in arches {
            ensure!(
                (r.ordinal as usize) < stored,
                "{what}: {key} for {arch} has ordinal {} but the blob holds {} kernels",
                r.ordinal,
                stored
            );
            ensure!(
                targets.contains(arch.as_str()),
                "{what}: {key} has code for {arch}, which gfx_arches {:?} does not list (the loader would never find it)",
                toc.gfx_arches
            );
            ensure!(
                r.original_size <= MAX_KERNEL_SIZE,
                "{what}: {key} for {arch} claims {} bytes, more than {MAX_KERNEL_SIZE}",
                r.original_size
            );
            let slot = &mut sizes[r.ordinal as usize];
            ensure!(
                *slot == UNUSED || *slot == r.original_size,
                "{what}: ordinal {} is claimed with sizes {} and {}",
                r.ordinal,
                *slot,
                r.original_size
            );
            if *slot == UNUSED {
                total += r.original_size;
                *slot = r.original_size;
            }
        }
    }
    ensure!(
        total <= MAX_ARCHIVE_CODE,
        "{what}: its kernels claim {total} bytes in all, more than {MAX_ARCHIVE_CODE}"
    );
    Ok(sizes)
}

/// An ordinal no TOC entry names.
const UNUSED: u64 = u64::MAX;

/// The validated TOC of an archive held in memory (a wheel member).
pub fn toc_of(data: &[u8], what: &str) -> Result<Toc> {
    toc_from(&mut SeekSource(std::io::Cursor::new(data)), what)
}

/// The validated TOC of the archive `src` reads (see [`load`] for what is
/// checked and held): every kernel a TOC entry names is decompressed, as
/// the loader will, to a sink under its declared size.
pub fn toc_from(src: &mut dyn Source, what: &str) -> Result<Toc> {
    Ok(load(src, what)?.0)
}

enum Storage {
    Blobs(Vec<(u64, u64)>),
    Zstd { offset: u64, size: u64 },
}

/// Bytes the typed TOC may take per byte of its encoding (plus 64 KiB).
/// A TOC kpack writes needs at most about 3 (short kernel keys); the bound
/// refuses a crafted one of many tiny items.
pub const TOC_DECODE_FACTOR: u64 = 4;

fn parse_toc(doc: Value<'_>, encoded_len: usize) -> Result<(Toc, Storage)> {
    let Value::Map(_) = doc else {
        bail!("is {}, not a map", doc.kind())
    };
    let mut budget = Budget::new(encoded_len, TOC_DECODE_FACTOR, 64 << 10, "the TOC");
    const KEYS: [&str; 8] = [
        "gfx_arches",
        "toc",
        "compression_scheme",
        "blobs",
        "zstd_offset",
        "zstd_size",
        "group_name",
        "gfx_arch_family",
    ];
    let fields = doc.fields(KEYS);
    let field = |i: usize| fields[i].with_context(|| format!("no {}", KEYS[i]));
    let string = |i: usize| {
        let v = field(i)?;
        v.as_str()
            .with_context(|| format!("{} is {}, not a string", KEYS[i], v.kind()))
    };
    let gfx_arches = match field(0)? {
        Value::Array(items) => {
            let mut out = budget.vec::<String>(items.len())?;
            for i in items.values() {
                out.push(budget.string(i.as_str().context("gfx_arches holds a non-string")?)?);
            }
            out
        }
        other => bail!("gfx_arches is {}, not an array", other.kind()),
    };
    let Value::Map(entries) = field(1)? else {
        bail!("toc is not a map")
    };
    let binaries = parse_binaries(entries, &mut budget)?;
    let compression = Compression::from_scheme(string(2)?)?;
    let storage = match compression {
        Compression::None => {
            let Value::Array(blobs) = field(3)? else {
                bail!("blobs is not an array")
            };
            ensure!(
                blobs.len() as u64 <= MAX_KERNELS,
                "{} blobs exceed the loader's {MAX_KERNELS} kernels",
                blobs.len()
            );
            let mut slots = budget.vec::<(u64, u64)>(blobs.len())?;
            for b in blobs.values() {
                let [offset, size] = b.fields(["offset", "size"]);
                slots.push((uint(offset, "offset")?, uint(size, "size")?));
            }
            Storage::Blobs(slots)
        }
        Compression::ZstdPerKernel => Storage::Zstd {
            offset: uint(fields[4], "zstd_offset")?,
            size: uint(fields[5], "zstd_size")?,
        },
    };
    let toc = Toc {
        group_name: budget.string(string(6)?)?,
        gfx_arch_family: budget.string(string(7)?)?,
        gfx_arches,
        binaries,
        compression,
    };
    Ok((toc, storage))
}

/// The `toc` map: key -> target -> ordinal and size, in file order; a key
/// naming no kernel is dropped.
fn parse_binaries(entries: msgpack::Seq<'_>, budget: &mut Budget) -> Result<Vec<Binary>> {
    let mut binaries = budget.vec::<Binary>(entries.len())?;
    for (k, v) in entries.pairs() {
        let key = k.as_str().context("a toc key is not a string")?;
        let Value::Map(per_arch) = v else {
            bail!("toc[{key}] is {}, not a map", v.kind())
        };
        if per_arch.is_empty() {
            continue;
        }
        let mut arches = budget.vec::<(String, KernelRef)>(per_arch.len())?;
        for (a, e) in per_arch.pairs() {
            let arch = a
                .as_str()
                .with_context(|| format!("toc[{key}] has a non-string target"))?;
            let [ordinal, original_size] = e.fields(["ordinal", "original_size"]);
            let r = KernelRef {
                ordinal: uint(ordinal, "ordinal").with_context(|| format!("toc[{key}][{arch}]"))?,
                original_size: uint(original_size, "original_size")
                    .with_context(|| format!("toc[{key}][{arch}]"))?,
            };
            arches.push((budget.string(arch)?, r));
        }
        binaries.push((budget.string(key)?, arches));
    }
    Ok(binaries)
}

/// A required non-negative integer.
fn uint(v: Option<Value<'_>>, key: &str) -> Result<u64> {
    let v = v.with_context(|| format!("no {key}"))?;
    v.as_u64().with_context(|| {
        format!(
            "{key} is {}, not a non-negative integer (the loader aborts on that)",
            v.kind()
        )
    })
}

/// Walks the frame lengths of a zstd-per-kernel blob (reading 4 bytes per
/// kernel, skipping the frames).
fn zstd_slots(
    src: &mut dyn Source,
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
    let mut r = src.read_from(offset)?;
    let mut word = [0u8; 4];
    ensure!(
        read_full(&mut r, &mut word)? == 4,
        "the file ends inside the blob"
    );
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
        ensure!(
            read_full(&mut r, &mut word)? == 4,
            "the file ends at frame {i}"
        );
        let len = u64::from(u32::from_le_bytes(word));
        ensure!(
            pos + 4 + len <= end,
            "frame {i} of {len} bytes runs past the blob's end"
        );
        let skipped = std::io::copy(&mut (&mut r).take(len), &mut std::io::sink())?;
        ensure!(skipped == len, "the file ends inside frame {i}");
        slots.push((pos + 4, len));
        pos += 4 + len;
    }
    Ok(slots)
}

/// Most bytes of kernel code one archive may claim in all (each kernel is
/// decompressed to check it, so this bounds the time `check` takes).
pub const MAX_ARCHIVE_CODE: u64 = 4 << 30;

/// Largest zstd window accepted (log2): level 3 uses at most 2 MiB, and a
/// frame asking for more could make the decoder allocate up to 2 GiB.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// Decompresses each frame a TOC entry names to a sink, checking it holds
/// exactly its declared size (the loader trusts that size).
fn verify_frames(src: &mut dyn Source, slots: &[(u64, u64)], sizes: &[u64]) -> Result<()> {
    let Some(&(first, _)) = slots.first() else {
        return Ok(());
    };
    let mut r = src.read_from(first)?;
    let mut pos = first;
    for (i, (&(off, len), &want)) in slots.iter().zip(sizes).enumerate() {
        // Frames are back to back with a 4-byte length before each.
        let gap = off - pos;
        std::io::copy(&mut (&mut r).take(gap), &mut std::io::sink())?;
        let mut frame = (&mut r).take(len);
        if want != UNUSED {
            let mut dec = zstd::stream::read::Decoder::new(&mut frame)
                .context("starting a zstd decoder")?
                .single_frame();
            dec.window_log_max(ZSTD_WINDOW_LOG_MAX)
                .context("setting the zstd window limit")?;
            let got = std::io::copy(&mut (&mut dec).take(want + 1), &mut std::io::sink())
                .with_context(|| {
                    format!("kernel {i}: its zstd frame of {len} bytes does not decompress")
                })?;
            ensure!(
                got == want,
                "kernel {i}: its zstd frame decompresses to {}{got} bytes, the TOC says {want}",
                if got > want { "more than " } else { "" }
            );
        }
        std::io::copy(&mut frame, &mut std::io::sink())?;
        pos = off + len;
    }
    Ok(())
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
    added: HashSet<(String, String)>,
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
            added: HashSet::new(),
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
        if !self.added.insert((key.to_string(), arch.to_string())) {
            bail!("{key} for {arch} added twice");
        }
        self.kernels.push((key.into(), arch.into(), file.into()));
        Ok(())
    }

    /// Writes the archive atomically to `path`. Every kernel file is sized
    /// first (a regular file of at most [`MAX_KERNEL_SIZE`], all together
    /// at most [`MAX_ARCHIVE_CODE`], which readers refuse beyond): nothing
    /// is read or written for an input that would be refused.
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut total: u64 = 0;
        for (key, arch, file) in &self.kernels {
            let meta = std::fs::metadata(file)
                .with_context(|| format!("{key} for {arch}: cannot read {}", file.display()))?;
            total += kernel_size(file, &meta).with_context(|| format!("{key} for {arch}"))?;
        }
        ensure!(
            total <= MAX_ARCHIVE_CODE,
            "the kernels hold {total} bytes in all, more than the {MAX_ARCHIVE_CODE} an archive \
             may hold (readers refuse more); split them over archives"
        );
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

/// The size of the code object `file` (`meta`), which must be a regular
/// file of at most [`MAX_KERNEL_SIZE`].
fn kernel_size(file: &Path, meta: &std::fs::Metadata) -> Result<u64> {
    ensure!(
        meta.is_file(),
        "{}: not a regular file (a code object file is wanted)",
        file.display()
    );
    let len = meta.len();
    ensure!(
        len <= MAX_KERNEL_SIZE,
        "{}: {len} bytes exceed {MAX_KERNEL_SIZE}",
        file.display()
    );
    Ok(len)
}

/// A code object file, read no further than the size it had when opened:
/// a device or a file that grows (`/dev/zero`) is refused, not read until
/// memory runs out.
fn read_kernel(file: &Path) -> Result<Vec<u8>> {
    let f = File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let meta = f
        .metadata()
        .with_context(|| format!("cannot read {}", file.display()))?;
    let len = kernel_size(file, &meta)?;
    let mut data = Vec::with_capacity(len as usize);
    f.take(len + 1)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {}", file.display()))?;
    ensure!(
        data.len() as u64 == len,
        "{}: changed size while being read ({len} bytes, then {})",
        file.display(),
        data.len()
    );
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `none` archive whose TOC claims three kernels of 2 GiB (each
    /// allowed, 6 GiB in all): refused from the TOC alone, before any
    /// stored size or kernel is looked at.
    #[test]
    fn kernels_claiming_more_than_an_archive_may_hold_are_refused() {
        let arches = ["gfx1200", "gfx1201", "gfx1100"];
        let mut e = Encoder::default();
        e.map(7).str("format_version").uint(1);
        e.str("group_name").str("demo");
        e.str("gfx_arch_family").str("gfx12");
        e.str("gfx_arches").array(3);
        for a in arches {
            e.str(a);
        }
        e.str("toc").map(1).str("demo/k.hip#0").map(3);
        for (i, a) in arches.iter().enumerate() {
            e.str(a).map(3).str("type").str("hsaco");
            e.str("ordinal").uint(i as u64);
            e.str("original_size").uint(MAX_KERNEL_SIZE);
        }
        e.str("compression_scheme").str("none");
        e.str("blobs").array(3);
        for _ in arches {
            e.map(2).str("offset").uint(BLOB_START);
            e.str("size").uint(MAX_KERNEL_SIZE);
        }
        let mut data = MAGIC.to_vec();
        data.extend(VERSION.to_le_bytes());
        data.extend(BLOB_START.to_le_bytes());
        data.resize(BLOB_START as usize, 0);
        data.extend(e.buf);
        let err = format!("{:#}", toc_of(&data, "a.kpack").unwrap_err());
        assert!(
            err.contains(&format!(
                "a.kpack: its kernels claim {} bytes in all, more than {MAX_ARCHIVE_CODE}",
                3 * MAX_KERNEL_SIZE
            )),
            "{err}"
        );
    }
}
