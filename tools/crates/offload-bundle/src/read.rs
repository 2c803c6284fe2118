//! Reading bundles: one uncompressed or `CCOB` bundle, or a sequence of them
//! as found in a `.hip_fatbin` section. Every size and offset read from the
//! input is checked against the input before it is used, and decompression
//! never produces more than the header announced (bounded by
//! [`Limits::max_uncompressed`]), so bad input gives an error, not a panic or
//! an unbounded allocation.

use std::io::Read;

use anyhow::{bail, Context, Result};

use crate::{ccob_header_size, md5_low, EntryId, Method, CCOB_MAGIC, MAGIC};

/// Resource bounds for reading untrusted input.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest uncompressed size a `CCOB` header may announce.
    pub max_uncompressed: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // Real fat binaries (all targets of one big TU) stay well below this;
        // it is the format v2 ceiling anyway.
        Limits {
            max_uncompressed: 4 << 30,
        }
    }
}

/// The header of a compressed (`CCOB`) bundle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompressedHeader {
    pub version: u16,
    pub method: Method,
    /// Size of the whole compressed bundle including its header (v2+).
    pub total_size: Option<u64>,
    pub uncompressed_size: u64,
    /// The stored hash (low 64 bits of the MD5 of the uncompressed bundle),
    /// verified on reading: a zstd stream without checksum can decode
    /// corrupted input to corrupted data of the right size.
    pub hash: u64,
}

/// One entry of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    pub id: String,
    /// Offset of the entry data inside the uncompressed bundle.
    pub offset: u64,
    pub size: u64,
}

impl Entry {
    pub fn parsed_id(&self) -> EntryId<'_> {
        EntryId::parse(&self.id)
    }
}

/// One bundle read from an input.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Where the bundle starts in the input.
    pub start: u64,
    /// How many input bytes it occupies (compressed size for `CCOB`).
    pub len: u64,
    pub compressed: Option<CompressedHeader>,
    pub entries: Vec<Entry>,
    /// The uncompressed bundle bytes.
    data: Vec<u8>,
}

impl Bundle {
    /// The data of an entry of this bundle (`e` must be one of
    /// `self.entries`; entries are bounds-checked when read).
    pub fn entry_data(&self, e: &Entry) -> &[u8] {
        // Bounds were checked when the entry was parsed.
        &self.data[e.offset as usize..(e.offset + e.size) as usize]
    }

    /// The uncompressed bundle.
    pub fn uncompressed(&self) -> &[u8] {
        &self.data
    }

    /// The device (non-host) entries.
    pub fn device_entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| !e.parsed_id().is_host())
    }
}

/// Reads the single bundle that starts at the beginning of `data`. Only zero
/// padding may follow it.
pub fn read_bundle(data: &[u8], limits: &Limits) -> Result<Bundle> {
    let b = read_one(data, 0, limits, false)?;
    let end = b.len as usize;
    if let Some(p) = data[end..].iter().position(|&c| c != 0) {
        bail!(
            "unexpected data at offset {} after the bundle (which ends at {end}); \
             the file holds more than one bundle or trailing garbage",
            end + p
        );
    }
    Ok(b)
}

/// Reads every bundle of a `.hip_fatbin`-style sequence: bundles back to back,
/// separated by zero padding (the linker aligns each to 4096). An empty or
/// all-zero input holds no bundles.
pub fn read_bundles(data: &[u8], limits: &Limits) -> Result<Vec<Bundle>> {
    BundleIter::new(data, limits).collect()
}

/// Iterates over the bundles of a sequence one at a time, so only one
/// decompressed bundle is held in memory (sections of real plugins hold
/// dozens). Stops after the first error.
pub struct BundleIter<'a> {
    data: &'a [u8],
    limits: Limits,
    pos: usize,
    index: usize,
    failed: bool,
    headers_only: bool,
}

impl<'a> BundleIter<'a> {
    pub fn new(data: &'a [u8], limits: &Limits) -> Self {
        BundleIter {
            data,
            limits: *limits,
            pos: 0,
            index: 0,
            failed: false,
            headers_only: false,
        }
    }

    /// Yields bundles without their data (entry lists only; `entry_data`
    /// and `uncompressed` are empty): only the inner header of a compressed
    /// bundle is decoded, so memory and time do not grow with the payload.
    /// The header's hash covers the whole payload and is therefore not
    /// checked here; reading the bundle with its data checks it.
    pub fn headers_only(mut self) -> Self {
        self.headers_only = true;
        self
    }
}

impl Iterator for BundleIter<'_> {
    type Item = Result<Bundle>;

    fn next(&mut self) -> Option<Result<Bundle>> {
        if self.failed {
            return None;
        }
        let skip = self.data[self.pos..].iter().position(|&c| c != 0)?;
        self.pos += skip;
        let pos = self.pos;
        match read_one(
            &self.data[pos..],
            pos as u64,
            &self.limits,
            self.headers_only,
        ) {
            Ok(b) => {
                self.pos += b.len as usize;
                self.index += 1;
                Some(Ok(b))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(
                    e.context(format!("bundle #{} at offset {pos}", self.index))
                ))
            }
        }
    }
}

fn read_one(data: &[u8], start: u64, limits: &Limits, headers_only: bool) -> Result<Bundle> {
    if data.starts_with(MAGIC) {
        let (entries, len) = parse_uncompressed(data)?;
        Ok(Bundle {
            start,
            len: len as u64,
            compressed: None,
            entries,
            data: if headers_only {
                Vec::new()
            } else {
                data[..len].to_vec()
            },
        })
    } else if data.starts_with(CCOB_MAGIC) {
        read_compressed(data, start, limits, headers_only)
    } else {
        let shown: String = data
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        bail!(
            "not an offload bundle: expected magic `__CLANG_OFFLOAD_BUNDLE__` or `CCOB`, found bytes {shown}"
        )
    }
}

fn u64_at(d: &[u8], o: usize) -> Option<u64> {
    d.get(o..o.checked_add(8)?)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
}

/// Parses the header of an uncompressed bundle; returns its entries and the
/// bundle length (end of the last entry or of the header).
fn parse_uncompressed(d: &[u8]) -> Result<(Vec<Entry>, usize)> {
    parse_uncompressed_prefix(d, d.len())
}

/// [`parse_uncompressed`] on the first bytes `d` of a bundle of `total` bytes.
fn parse_uncompressed_prefix(d: &[u8], total: usize) -> Result<(Vec<Entry>, usize)> {
    let mut pos = MAGIC.len();
    let count = u64_at(d, pos).with_context(|| {
        format!(
            "truncated bundle: {} bytes, the entry count needs {}",
            d.len(),
            pos + 8
        )
    })?;
    pos += 8;
    // Each entry needs at least 24 header bytes: reject impossible counts
    // before looping or allocating.
    let max_entries = (d.len() - pos) / 24;
    if count > max_entries as u64 {
        bail!(
            "corrupt bundle: entry count {count} cannot fit in {} bytes (at most {max_entries} entries)",
            d.len()
        );
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count as usize);
    let mut end = 0usize;
    for i in 0..count {
        let trunc = || {
            format!(
                "truncated bundle header in entry {i} ({} bytes in total)",
                d.len()
            )
        };
        let offset = u64_at(d, pos).with_context(trunc)?;
        let size = u64_at(d, pos + 8).with_context(trunc)?;
        let id_len = u64_at(d, pos + 16).with_context(trunc)?;
        pos += 24;
        let id_end = usize::try_from(id_len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= d.len())
            .with_context(|| {
                format!(
                    "corrupt bundle: entry {i} id length {id_len} runs past the end ({} bytes)",
                    d.len()
                )
            })?;
        let id = std::str::from_utf8(&d[pos..id_end])
            .map_err(|_| anyhow::anyhow!("corrupt bundle: entry {i} id is not UTF-8"))?
            .to_string();
        pos = id_end;
        if id.is_empty() {
            bail!("corrupt bundle: entry {i} has an empty id");
        }
        let data_end = offset
            .checked_add(size)
            .filter(|&e| e <= total as u64)
            .with_context(|| {
                format!(
                    "truncated or corrupt bundle: entry `{id}` spans bytes {offset}..{offset}+{size} \
                     but the bundle has {total} bytes"
                )
            })?;
        if entries.iter().any(|e| e.id == id) {
            bail!("corrupt bundle: entry id `{id}` appears twice");
        }
        end = end.max(data_end as usize);
        entries.push(Entry { id, offset, size });
    }
    // Entry data must not overlap the header it is described by.
    for e in &entries {
        if e.size > 0 && e.offset < pos as u64 {
            bail!(
                "corrupt bundle: entry `{}` data at offset {} overlaps the header (which ends at {pos})",
                e.id,
                e.offset
            );
        }
    }
    Ok((entries, end.max(pos)))
}

fn read_compressed(d: &[u8], start: u64, limits: &Limits, headers_only: bool) -> Result<Bundle> {
    let (header, hsize) = ccob_header(d, limits)?;
    let stream_end = match header.total_size {
        Some(t) => {
            if t < hsize as u64 {
                bail!("corrupt compressed bundle: total size {t} is smaller than its {hsize}-byte header");
            }
            if t > d.len() as u64 {
                bail!(
                    "truncated compressed bundle: header says {t} bytes, only {} available",
                    d.len()
                );
            }
            t as usize
        }
        // Version 1 records no size: the stream runs to the next bundle magic
        // (bundles are 4096-aligned) or the end of the input.
        None => next_magic_at_alignment(d, 4096).unwrap_or(d.len()),
    };
    let stream = &d[hsize..stream_end];
    let (entries, data) = if headers_only {
        // Entry lists only: decode just the inner header. The hash covers
        // the whole bundle, so it is checked when a bundle's data is read
        // (`extract`), not here: listing holds no payload.
        let head = decompress_prefix(header.method, stream, header.uncompressed_size)?;
        let (entries, _) = parse_uncompressed_prefix(&head, header.uncompressed_size as usize)
            .context("inside the compressed bundle")?;
        (entries, Vec::new())
    } else {
        decompress_bundle(&header, stream)?
    };
    Ok(Bundle {
        start,
        len: stream_end as u64,
        compressed: Some(header),
        entries,
        data,
    })
}

/// The CCOB header at the start of `d` and its size, checked against
/// `limits`.
fn ccob_header(d: &[u8], limits: &Limits) -> Result<(CompressedHeader, usize)> {
    if d.len() < 8 {
        bail!(
            "truncated compressed bundle: {} bytes, the CCOB header needs at least 8",
            d.len()
        );
    }
    let version = u16::from_le_bytes([d[4], d[5]]);
    let method_raw = u16::from_le_bytes([d[6], d[7]]);
    let hsize = ccob_header_size(version).with_context(|| {
        format!("unsupported compressed bundle version {version} (known: 1, 2, 3)")
    })?;
    if d.len() < hsize {
        bail!(
            "truncated compressed bundle: {} bytes, a version {version} header needs {hsize}",
            d.len()
        );
    }
    let method = Method::from_raw(method_raw).with_context(|| {
        format!("unknown compression method {method_raw} in CCOB header (0 = zlib, 1 = zstd)")
    })?;
    let u32_at = |o: usize| u32::from_le_bytes(d[o..o + 4].try_into().unwrap()) as u64;
    let (total_size, uncompressed_size, hash) = match version {
        1 => (None, u32_at(8), u64_at(d, 12).unwrap()),
        2 => (Some(u32_at(8)), u32_at(12), u64_at(d, 16).unwrap()),
        _ => (
            Some(u64_at(d, 8).unwrap()),
            u64_at(d, 16).unwrap(),
            u64_at(d, 24).unwrap(),
        ),
    };
    if uncompressed_size > limits.max_uncompressed {
        bail!(
            "compressed bundle announces {uncompressed_size} uncompressed bytes, more than the limit of {}",
            limits.max_uncompressed
        );
    }
    let header = CompressedHeader {
        version,
        method,
        total_size,
        uncompressed_size,
        hash,
    };
    Ok((header, hsize))
}

/// Decompresses `stream` and checks the result against the header's hash:
/// the inner bundle's entries, and the data.
fn decompress_bundle(header: &CompressedHeader, stream: &[u8]) -> Result<(Vec<Entry>, Vec<u8>)> {
    let data = decompress(header.method, stream, header.uncompressed_size)?;
    let (actual, hash) = (md5_low(&data), header.hash);
    if actual != hash {
        bail!(
            "corrupt compressed bundle: the MD5 of the decompressed data ({actual:#018x}) \
             does not match the header's hash ({hash:#018x})"
        );
    }
    if !data.starts_with(MAGIC) {
        bail!("compressed bundle does not decompress to an offload bundle (no `__CLANG_OFFLOAD_BUNDLE__` magic)");
    }
    let (entries, inner_len) = parse_uncompressed(&data).context("inside the compressed bundle")?;
    if data[inner_len..].iter().any(|&c| c != 0) {
        bail!("compressed bundle holds trailing data after its inner bundle");
    }
    Ok((entries, data))
}

fn next_magic_at_alignment(d: &[u8], align: usize) -> Option<usize> {
    (align..d.len())
        .step_by(align)
        .find(|&p| d[p..].starts_with(MAGIC) || d[p..].starts_with(CCOB_MAGIC))
}

/// Most bytes of a compressed bundle's inner header decoded for listing.
const HEADER_KEEP: usize = 16 << 20;

/// How many bytes the uncompressed bundle header at the start of `d` needs,
/// once `d` holds enough to tell (the count and every id length).
fn header_len(d: &[u8]) -> Option<usize> {
    let count = u64_at(d, MAGIC.len())?;
    let mut pos = MAGIC.len() + 8;
    for _ in 0..count {
        let id_len = u64_at(d, pos + 16)?;
        pos = pos
            .checked_add(24)?
            .checked_add(usize::try_from(id_len).ok()?)?;
        if pos > d.len() {
            return None;
        }
    }
    Some(pos)
}

/// A streaming decoder of a CCOB payload (one zstd frame, or a zlib
/// stream); `zstd_window_log_max` raises zstd's window limit above its
/// default (27).
pub(crate) fn stream_decoder<'a>(
    method: Method,
    stream: &'a [u8],
    zstd_window_log_max: Option<u32>,
) -> Result<Box<dyn Read + 'a>> {
    Ok(match method {
        Method::Zstd => {
            let mut d = zstd::stream::read::Decoder::with_buffer(stream)
                .context("cannot start zstd decompression")?
                .single_frame();
            if let Some(log) = zstd_window_log_max {
                d.window_log_max(log)
                    .context("cannot set the zstd window limit")?;
            }
            Box::new(d)
        }
        Method::Zlib => Box::new(flate2::read::ZlibDecoder::new(stream)),
    })
}

/// The error of a stream that does not decode.
pub(crate) fn stream_error(method: Method, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "corrupt compressed bundle: {} stream does not decompress: {e}",
        method.name()
    )
}

/// Decodes only the start of a compressed bundle: up to its inner header
/// (at most [`HEADER_KEEP`] bytes and at most `expected`). Decoding stops
/// there, so a streaming decoder touches little of its window.
fn decompress_prefix(method: Method, stream: &[u8], expected: u64) -> Result<Vec<u8>> {
    // zstd's default window limit: a prefix is not worth a large window.
    let mut r = stream_decoder(method, stream, None)?;
    let cap = expected.min(HEADER_KEEP as u64) as usize;
    let mut head = Vec::new();
    let mut buf = vec![0u8; 1 << 12];
    while head.len() < cap && header_len(&head).is_none_or(|n| n > head.len()) {
        let want = buf.len().min(cap - head.len());
        let k = match r.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(stream_error(method, e)),
        };
        head.extend_from_slice(&buf[..k]);
        if !MAGIC.starts_with(&head[..head.len().min(MAGIC.len())]) {
            break;
        }
    }
    if !head.starts_with(MAGIC) {
        bail!("compressed bundle does not decompress to an offload bundle (no `__CLANG_OFFLOAD_BUNDLE__` magic)");
    }
    Ok(head)
}

/// Decompresses a whole bundle straight into one buffer of the announced
/// size (already capped by [`Limits::max_uncompressed`]). zstd decodes into
/// it in one pass, with no window buffer of its own, so memory is the
/// payload and no more.
fn decompress(method: Method, stream: &[u8], expected: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    usize::try_from(expected)
        .ok()
        .and_then(|n| out.try_reserve_exact(n).ok())
        .with_context(|| format!("cannot allocate {expected} bytes for the decompressed bundle"))?;
    let bad_size = |got: String| {
        anyhow::anyhow!(
            "corrupt compressed bundle: header announces {expected} uncompressed bytes, the {} stream gives {got}",
            method.name()
        )
    };
    match method {
        Method::Zstd => {
            // One frame, as LLVM writes; a v1 stream may be followed by padding.
            let frame_len = zstd::zstd_safe::find_frame_compressed_size(stream).map_err(|c| {
                anyhow::anyhow!(
                    "corrupt compressed bundle: zstd stream does not decompress: {}",
                    zstd::zstd_safe::get_error_name(c)
                )
            })?;
            let mut dec =
                zstd::bulk::Decompressor::new().context("cannot start zstd decompression")?;
            // LLVM's long-distance matching uses windows beyond zstd's
            // default decoding limit; the output buffer bounds memory here.
            dec.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(31))
                .context("cannot set the zstd window limit")?;
            if let Err(e) = dec.decompress_to_buffer(&stream[..frame_len], &mut out) {
                // The buffer holds exactly the announced size.
                if e.to_string().contains("Destination buffer is too small") {
                    return Err(bad_size(format!("more than {expected}")));
                }
                bail!("corrupt compressed bundle: zstd stream does not decompress: {e}");
            }
        }
        Method::Zlib => {
            flate2::read::ZlibDecoder::new(stream)
                .take(expected.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| {
                    anyhow::anyhow!(
                        "corrupt compressed bundle: zlib stream does not decompress: {e}"
                    )
                })?;
        }
    }
    if out.len() as u64 != expected {
        let got = if out.len() as u64 > expected {
            format!("more than {expected}")
        } else {
            out.len().to_string()
        };
        return Err(bad_size(got));
    }
    Ok(out)
}
