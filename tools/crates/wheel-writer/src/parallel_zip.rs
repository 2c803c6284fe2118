//! The wheel's own ZIP writer: deterministic, with large members deflated
//! in parallel.
//!
//! Why not the `zip` crate: it deflates each entry on one thread, and the
//! wheels this project builds are dominated by a few hundred-MB libraries,
//! so one core would set the build time. Here an entry of at least
//! [`CHUNKED_MIN`] bytes is cut into [`CHUNK`]-sized pieces that worker
//! threads deflate, each primed with the preceding 32 KiB as a preset
//! dictionary and ended with a sync flush, so the pieces concatenate into
//! one valid deflate stream (as pigz does). The output does not depend on
//! the number of threads.
//!
//! Format: local headers patched in place after the data is streamed (no
//! data descriptors), a central directory, ZIP64 only when sizes or offsets
//! need it, fixed timestamps (unless an entry brings its own: raw copies
//! from another archive, [`ParallelZipWriter::add_reader_dated`]), unix
//! permissions, no other extra fields.
//!
//! Entries already compressed elsewhere are copied as their compressed
//! bytes ([`ParallelZipWriter::add_raw`]): the header is written from what
//! the source's central directory says, the data is not inflated.

use anyhow::{bail, Context, Result};
use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{mpsc, Arc, Mutex};

#[cfg(doc)]
use crate::deflate_map::inflate_mapped;
use crate::deflate_map::DeflateMap;

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
const U32_MAX: u64 = 0xFFFF_FFFF;
/// Entries at least this large get a ZIP64 local header up front: the
/// compressed size is only known afterwards and may exceed the input a bit.
const ZIP64_LOCAL_THRESHOLD: u64 = 0xF000_0000;
const BUF: usize = 256 * 1024;
/// Deflated entries this large are compressed in parallel chunks.
pub const CHUNKED_MIN: u64 = 4 << 20;
/// Chunk size: large enough that the sync-flush marker (5 bytes) and the
/// block restarts cost well under 0.1%, small enough to keep memory flat.
pub const CHUNK: usize = 1 << 20;
/// Deflate window: each chunk is primed with this much preceding data.
const DICT: usize = 32 * 1024;

/// A compressed chunk, its CRC, and its input buffer (for reuse).
type ChunkResult = Result<(Vec<u8>, Crc, Vec<u8>)>;
/// Dictionary, data, is-last, and where to send the result.
type Job = (Vec<u8>, Vec<u8>, bool, mpsc::SyncSender<ChunkResult>);

/// Result of writing one entry: what RECORD needs.
#[derive(Debug, Clone)]
pub struct Written {
    pub sha256: [u8; 32],
    pub size: u64,
}

/// An entry compressed elsewhere (in another archive), copied as its
/// compressed bytes by [`ParallelZipWriter::add_raw`]: what that archive's
/// central directory says about it.
#[derive(Debug, Clone)]
pub struct RawEntry {
    pub name: String,
    /// 0 (stored) or 8 (deflated).
    pub method: u16,
    pub crc: u32,
    pub compressed_size: u64,
    pub size: u64,
    /// `st_mode`: permission bits, with or without the file type bits
    /// (a regular file when there are none).
    pub mode: u32,
    /// MS-DOS (time, date).
    pub dos: (u16, u16),
}

impl RawEntry {
    /// An entry still to be deflated (no CRC or sizes yet), with the
    /// default time.
    pub fn to_deflate(name: String, mode: u32) -> RawEntry {
        RawEntry {
            name,
            method: 8,
            crc: 0,
            compressed_size: 0,
            size: 0,
            mode,
            dos: dos_datetime(None),
        }
    }
}

struct CdEntry {
    name: String,
    method: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    offset: u64,
    /// `st_mode`, file type bits included.
    mode: u32,
    dos: (u16, u16),
}

pub struct ParallelZipWriter<W: Write + Seek> {
    out: W,
    pos: u64,
    entries: Vec<CdEntry>,
    dos_time: u16,
    dos_date: u16,
    level: u32,
    jobs: usize,
    /// `CHUNKED_MIN` and `CHUNK`; smaller in unit tests (debug-build deflate is slow).
    chunked_min: u64,
    chunk: usize,
    /// Values from this size on go to ZIP64 fields (`U32_MAX`; tests lower
    /// it to exercise the ZIP64 layout without writing 4 GiB).
    big: u64,
    zip64_local_min: u64,
}

/// Counts bytes written through it, so the compressed size is known.
struct Counting<'a, W: Write> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write + Seek> ParallelZipWriter<W> {
    /// `level` 0 stores entries uncompressed; 1–9 deflates them.
    pub fn new(out: W, unix_time: Option<u64>, level: u32) -> Self {
        let (dos_time, dos_date) = dos_datetime(unix_time);
        ParallelZipWriter {
            out,
            pos: 0,
            entries: Vec::new(),
            dos_time,
            dos_date,
            level,
            jobs: 1,
            chunked_min: CHUNKED_MIN,
            chunk: CHUNK,
            big: U32_MAX,
            zip64_local_min: ZIP64_LOCAL_THRESHOLD,
        }
    }

    /// Threads used to compress large entries.
    pub fn set_jobs(&mut self, jobs: usize) {
        self.jobs = jobs.max(1);
    }

    /// Uses the ZIP64 layout for every entry and the end record, as if all
    /// sizes and offsets were over 4 GiB (for testing readers cheaply).
    #[cfg(test)]
    pub fn force_zip64(&mut self) {
        self.big = 0;
        self.zip64_local_min = 0;
    }

    /// Writes an entry from memory.
    pub fn add_bytes(&mut self, name: &str, data: &[u8], mode: u32) -> Result<Written> {
        self.add_reader(name, data, data.len() as u64, mode)
    }

    /// Streams an entry of exactly `size` bytes from `src`, hashing while
    /// copying; errors if the source turns out to have another length.
    ///
    /// Deflated entries of at least `CHUNKED_MIN` bytes are compressed as
    /// independent `CHUNK`-sized pieces on `jobs` threads. The chunking does
    /// not depend on `jobs`, so the output is the same for any thread count.
    pub fn add_reader(
        &mut self,
        name: &str,
        src: impl Read,
        size: u64,
        mode: u32,
    ) -> Result<Written> {
        let dos = (self.dos_time, self.dos_date);
        self.add_reader_dated(name, src, size, mode, dos)
    }

    /// [`Self::add_reader`] with the entry's own MS-DOS (time, date)
    /// instead of the archive's.
    pub fn add_reader_dated(
        &mut self,
        name: &str,
        mut src: impl Read,
        size: u64,
        mode: u32,
        dos: (u16, u16),
    ) -> Result<Written> {
        if name.len() > 0xFFFF {
            let head: String = name.chars().take(60).collect();
            bail!(
                "archive path {head}... is {} bytes long; ZIP allows at most 65535",
                name.len()
            );
        }
        let method: u16 = if self.level == 0 { 0 } else { 8 };
        let zip64 = size >= self.zip64_local_min;
        let offset = self.pos;
        self.write_local_header(name, method, zip64, dos, None)?;
        let data_start = self.pos;
        let (sha, crc, total, csize) = if method == 8 && size >= self.chunked_min {
            let (mut sha, mut crc) = (Sha256::new(), Crc::new());
            let (total, csize) =
                self.copy_chunked(name, &mut src, (&mut sha, &mut crc), Vec::new(), true)?;
            (sha.finalize().into(), crc.sum(), total, csize)
        } else {
            self.copy_stream(name, &mut src, method, size)?
        };
        if total != size {
            bail!("the source of {name} changed while it was read ({size} bytes expected, {total} read)");
        }
        self.pos = data_start + csize;
        self.finish_entry(name, crc, csize, size, offset, zip64)?;
        self.push_entry(
            name,
            method,
            crc,
            (csize, size),
            offset,
            0o100000 | mode,
            dos,
        );
        Ok(Written { sha256: sha, size })
    }

    /// Copies an entry that is already compressed: a local header with the
    /// CRC and sizes `e` gives (from the source's central directory, so a
    /// source written with data descriptors needs none here), then exactly
    /// `e.compressed_size` bytes of `compressed`, neither inflated nor
    /// checked (the reader of the output checks the CRC as it would have
    /// checked the source's).
    pub fn add_raw(&mut self, e: &RawEntry, compressed: impl Read) -> Result<()> {
        if e.name.len() > 0xFFFF {
            bail!(
                "archive path of {} bytes; ZIP allows at most 65535",
                e.name.len()
            );
        }
        if e.method != 0 && e.method != 8 {
            bail!(
                "{}: compression method {} is not stored (0) or deflate (8), the methods a wheel \
                 may use",
                e.name,
                e.method
            );
        }
        let zip64 = e.size.max(e.compressed_size) >= self.big;
        let offset = self.pos;
        let sizes = (e.compressed_size, e.size);
        self.write_local_header(&e.name, e.method, zip64, e.dos, Some((e.crc, sizes)))?;
        let n = std::io::copy(&mut compressed.take(e.compressed_size), &mut self.out)
            .with_context(|| format!("copying {}", e.name))?;
        if n != e.compressed_size {
            bail!(
                "{}: the source ended after {n} of {} compressed bytes",
                e.name,
                e.compressed_size
            );
        }
        self.pos += n;
        let mode = if e.mode & 0o170000 == 0 {
            0o100000 | e.mode
        } else {
            e.mode
        };
        self.push_entry(&e.name, e.method, e.crc, sizes, offset, mode, e.dos);
        Ok(())
    }

    /// Writes a deflated entry whose content `src` differs from an input
    /// member's only in the bytes `changed` (same size), reusing that
    /// member's raw deflate stream `raw` as mapped by `map`
    /// ([`inflate_mapped`]): its blocks before the change are copied and
    /// closed with an empty stored block (a byte boundary), the content
    /// from there to the first mapped block boundary 32 KiB past the change
    /// is deflated again in parallel chunks (ending with a sync flush), and
    /// the input's blocks from that boundary on are copied (their matches
    /// reach only unchanged bytes). Cuts are at byte-aligned boundaries. `e` gives the name, time and
    /// mode; SHA-256 and CRC cover the whole new content.
    pub fn add_spliced(
        &mut self,
        e: &RawEntry,
        raw: &mut dyn Read,
        map: &DeflateMap,
        changed: std::ops::Range<u64>,
        src: &mut dyn Read,
    ) -> Result<Written> {
        if self.level == 0 {
            bail!("{}: splicing needs a deflating writer (level 1-9)", e.name);
        }
        let (pre, post) = map.cuts(changed.clone());
        let size = map.size;
        let zip64 = size >= self.zip64_local_min;
        let offset = self.pos;
        self.write_local_header(&e.name, 8, zip64, e.dos, None)?;
        let data_start = self.pos;
        let (mut sha, mut crc) = (Sha256::new(), Crc::new());
        let mut csize = copy_prefix(raw, pre.bit, &mut self.out)?;
        let dict = hash_through(src, pre.out, (&mut sha, &mut crc), &e.name)?;
        // The reused blocks decode to the old bytes: the new ones must be
        // the same there.
        let differs = |what: &str| {
            anyhow::anyhow!(
                "{}: the new content differs from the member's {what} the bytes given as \
                 changed ({}..{}); only those may differ",
                e.name,
                changed.start,
                changed.end
            )
        };
        if crc.sum() != pre.crc {
            return Err(differs("before"));
        }
        let mid = post.map_or(size, |b| b.out) - pre.out;
        let (n, c) = self.copy_chunked(
            &e.name,
            &mut src.take(mid),
            (&mut sha, &mut crc),
            dict,
            post.is_none(),
        )?;
        if n != mid {
            bail!(
                "{}: the new content is shorter than the member it replaces",
                e.name
            );
        }
        csize += c;
        if let Some(b) = post {
            let mut tail = Crc::new();
            hash_through(src, size - b.out, (&mut sha, &mut tail), &e.name)?;
            if tail.sum() != map.crc_after(&b) {
                return Err(differs("after"));
            }
            crc.combine(&tail);
            let consumed = pre.bit / 8;
            csize += copy_tail(raw, consumed, b.bit, map.end_bit, &mut self.out)?;
        }
        if src.read(&mut [0u8])? != 0 {
            bail!(
                "{}: the new content is longer than the member it replaces",
                e.name
            );
        }
        let crc = crc.sum();
        self.pos = data_start + csize;
        self.finish_entry(&e.name, crc, csize, size, offset, zip64)?;
        let mode = 0o100000 | (e.mode & 0o7777);
        self.push_entry(&e.name, 8, crc, (csize, size), offset, mode, e.dos);
        Ok(Written {
            sha256: sha.finalize().into(),
            size,
        })
    }

    /// One thread: hash and compress (or store) while copying.
    fn copy_stream(
        &mut self,
        name: &str,
        src: &mut dyn Read,
        method: u16,
        size: u64,
    ) -> Result<([u8; 32], u32, u64, u64)> {
        let mut sha = Sha256::new();
        let mut crc = Crc::new();
        let mut buf = vec![0u8; BUF.min(size.max(1) as usize)];
        let mut total = 0u64;
        let mut counting = Counting {
            inner: &mut self.out,
            n: 0,
        };
        {
            let mut sink: Box<dyn Write + '_> = if method == 0 {
                Box::new(&mut counting)
            } else {
                Box::new(flate2::write::DeflateEncoder::new(
                    &mut counting,
                    flate2::Compression::new(self.level),
                ))
            };
            loop {
                let n = read_full(src, &mut buf)
                    .with_context(|| format!("reading the source of {name}"))?;
                if n == 0 {
                    break;
                }
                sha.update(&buf[..n]);
                crc.update(&buf[..n]);
                total += n as u64;
                sink.write_all(&buf[..n])?;
            }
            sink.flush()?;
        } // dropping the encoder finishes the deflate stream
        Ok((sha.finalize().into(), crc.sum(), total, counting.n))
    }

    /// pigz-style: each chunk is raw deflate primed with the previous 32 KiB
    /// as a preset dictionary and ended with a sync flush (byte-aligned, not
    /// final), so the pieces concatenate into one deflate stream; the last
    /// chunk ends the stream. CRCs are computed per chunk and combined; the
    /// SHA-256 runs here, in order, while the workers compress.
    ///
    /// `sha` and `crc` go on over the data; the first chunk is primed with
    /// `dict` (the data before it, for a stream continued here); the last
    /// chunk ends the stream only if `finish` (otherwise it ends with a
    /// sync flush, for more blocks to follow). Returns the bytes read and
    /// written.
    fn copy_chunked(
        &mut self,
        name: &str,
        src: &mut dyn Read,
        (sha, crc): (&mut Sha256, &mut Crc),
        dict: Vec<u8>,
        finish: bool,
    ) -> Result<(u64, u64)> {
        let (level, jobs, chunk) = (self.level, self.jobs, self.chunk);
        let out = &mut self.out;
        std::thread::scope(|scope| -> Result<(u64, u64)> {
            let job_tx = spawn_compressors(scope, jobs, level);
            let (mut total, mut csize) = (0u64, 0u64);
            let mut pending: VecDeque<mpsc::Receiver<ChunkResult>> = VecDeque::new();
            let mut spare: Vec<Vec<u8>> = Vec::new();
            let mut dict = dict;
            let mut next = vec![0u8; chunk];
            let mut n = read_full(src, &mut next)
                .with_context(|| format!("reading the source of {name}"))?;
            let mut drain_one =
                |pending: &mut VecDeque<_>, spare: &mut Vec<Vec<u8>>| -> Result<()> {
                    let rx: mpsc::Receiver<_> = pending.pop_front().unwrap();
                    let (z, c, data): (Vec<u8>, Crc, Vec<u8>) =
                        rx.recv().context("a compression thread died")??;
                    out.write_all(&z)?;
                    csize += z.len() as u64;
                    crc.combine(&c);
                    spare.push(data);
                    Ok(())
                };
            loop {
                let data =
                    std::mem::replace(&mut next, spare.pop().unwrap_or_else(|| vec![0u8; chunk]));
                let len = n;
                sha.update(&data[..len]);
                total += len as u64;
                // Look ahead one chunk to know whether this one is the last.
                next.resize(chunk, 0);
                n = if len < chunk {
                    0
                } else {
                    read_full(src, &mut next)
                        .with_context(|| format!("reading the source of {name}"))?
                };
                let last = n == 0;
                let end_stream = last && finish;
                let mut data = data;
                data.truncate(len);
                let new_dict = data[len.saturating_sub(DICT)..].to_vec();
                let (tx, rx) = mpsc::sync_channel(1);
                job_tx
                    .send((std::mem::replace(&mut dict, new_dict), data, end_stream, tx))
                    .context("compression threads stopped")?;
                pending.push_back(rx);
                if pending.len() > jobs {
                    drain_one(&mut pending, &mut spare)?;
                }
                if last {
                    break;
                }
            }
            drop(job_tx);
            while !pending.is_empty() {
                drain_one(&mut pending, &mut spare)?;
            }
            Ok((total, csize))
        })
    }

    /// A local header; CRC and (compressed, uncompressed) sizes are zero
    /// and patched later unless `known`.
    fn write_local_header(
        &mut self,
        name: &str,
        method: u16,
        zip64: bool,
        dos: (u16, u16),
        known: Option<(u32, (u64, u64))>,
    ) -> Result<()> {
        let (crc, (csize, usize)) = known.unwrap_or_default();
        let mut h = Vec::with_capacity(30 + name.len() + 20);
        put32(&mut h, LOCAL_SIG);
        put16(&mut h, if zip64 { 45 } else { 20 });
        put16(&mut h, flags(name));
        put16(&mut h, method);
        put16(&mut h, dos.0);
        put16(&mut h, dos.1);
        put32(&mut h, crc);
        put32(&mut h, if zip64 { u32::MAX } else { csize as u32 });
        put32(&mut h, if zip64 { u32::MAX } else { usize as u32 });
        put16(&mut h, name.len() as u16);
        put16(&mut h, if zip64 { 20 } else { 0 });
        h.extend_from_slice(name.as_bytes());
        if zip64 {
            put16(&mut h, 1);
            put16(&mut h, 16);
            put64(&mut h, usize);
            put64(&mut h, csize);
        }
        self.out.write_all(&h)?;
        self.pos += h.len() as u64;
        Ok(())
    }

    /// Patches the CRC and sizes into the local header at `offset`.
    fn finish_entry(
        &mut self,
        name: &str,
        crc: u32,
        csize: u64,
        usize: u64,
        offset: u64,
        zip64: bool,
    ) -> Result<()> {
        if !zip64 && csize >= self.big {
            bail!(
                "{name}: compressed size {csize} needs ZIP64 but the entry was started without it"
            );
        }
        self.out.seek(SeekFrom::Start(offset + 14))?;
        let mut p = Vec::with_capacity(12);
        put32(&mut p, crc);
        if zip64 {
            self.out.write_all(&p)?;
            self.out
                .seek(SeekFrom::Start(offset + 30 + name.len() as u64 + 4))?;
            let mut q = Vec::new();
            put64(&mut q, usize);
            put64(&mut q, csize);
            self.out.write_all(&q)?;
        } else {
            put32(&mut p, csize as u32);
            put32(&mut p, usize as u32);
            self.out.write_all(&p)?;
        }
        self.out.seek(SeekFrom::Start(self.pos))?;
        Ok(())
    }

    /// Records a written entry for the central directory.
    #[allow(clippy::too_many_arguments)]
    fn push_entry(
        &mut self,
        name: &str,
        method: u16,
        crc: u32,
        (csize, usize): (u64, u64),
        offset: u64,
        mode: u32,
        dos: (u16, u16),
    ) {
        self.entries.push(CdEntry {
            name: name.to_string(),
            method,
            crc,
            csize,
            usize,
            offset,
            mode,
            dos,
        });
    }

    /// A 32-bit field's value, or the 0xFFFFFFFF marker if it is in ZIP64.
    fn clamp(&self, v: u64) -> u32 {
        if v >= self.big {
            u32::MAX
        } else {
            v as u32
        }
    }

    /// Writes the central directory and returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        let cd_start = self.pos;
        let mut cd = Vec::new();
        for e in &self.entries {
            let mut extra = Vec::new();
            for (v, _) in [(e.usize, 0), (e.csize, 1), (e.offset, 2)] {
                if v >= self.big {
                    put64(&mut extra, v);
                }
            }
            let big = !extra.is_empty();
            put32(&mut cd, CENTRAL_SIG);
            put16(&mut cd, (3 << 8) | if big { 45 } else { 20 }); // made by: unix
            put16(&mut cd, if big { 45 } else { 20 });
            put16(&mut cd, flags(&e.name));
            put16(&mut cd, e.method);
            put16(&mut cd, e.dos.0);
            put16(&mut cd, e.dos.1);
            put32(&mut cd, e.crc);
            put32(&mut cd, self.clamp(e.csize));
            put32(&mut cd, self.clamp(e.usize));
            put16(&mut cd, e.name.len() as u16);
            put16(&mut cd, if big { extra.len() as u16 + 4 } else { 0 });
            put16(&mut cd, 0); // comment
            put16(&mut cd, 0); // disk
            put16(&mut cd, 0); // internal attributes
            put32(&mut cd, e.mode << 16);
            put32(&mut cd, self.clamp(e.offset));
            cd.extend_from_slice(e.name.as_bytes());
            if big {
                put16(&mut cd, 1);
                put16(&mut cd, extra.len() as u16);
                cd.extend_from_slice(&extra);
            }
        }
        let cd_size = cd.len() as u64;
        let n = self.entries.len() as u64;
        let need64 = n >= 0xFFFF || cd_start >= self.big || cd_size >= self.big;
        if need64 {
            let rec = cd_start + cd_size;
            put32(&mut cd, ZIP64_EOCD_SIG);
            put64(&mut cd, 44);
            put16(&mut cd, (3 << 8) | 45);
            put16(&mut cd, 45);
            put32(&mut cd, 0);
            put32(&mut cd, 0);
            put64(&mut cd, n);
            put64(&mut cd, n);
            put64(&mut cd, cd_size);
            put64(&mut cd, cd_start);
            put32(&mut cd, ZIP64_LOCATOR_SIG);
            put32(&mut cd, 0);
            put64(&mut cd, rec);
            put32(&mut cd, 1);
        }
        put32(&mut cd, EOCD_SIG);
        put16(&mut cd, 0);
        put16(&mut cd, 0);
        put16(&mut cd, n.min(0xFFFF) as u16);
        put16(&mut cd, n.min(0xFFFF) as u16);
        put32(&mut cd, self.clamp(cd_size));
        put32(&mut cd, self.clamp(cd_start));
        put16(&mut cd, 0);
        self.out.write_all(&cd)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Copies the raw deflate stream `raw` up to the byte-aligned block
/// boundary `bit` and closes it with an empty stored block (a sync flush
/// marker: 3 zero header bits, padding, LEN 0, NLEN 0xFFFF), after which
/// newly deflated blocks may follow; nothing if `bit` is 0. Returns the
/// bytes written.
fn copy_prefix(raw: &mut dyn Read, bit: u64, out: &mut dyn Write) -> Result<u64> {
    if bit == 0 {
        return Ok(0);
    }
    if !bit.is_multiple_of(8) {
        bail!("deflate streams are cut at byte-aligned block boundaries only");
    }
    let whole = bit / 8;
    if std::io::copy(&mut raw.take(whole), out)? != whole {
        bail!("the member's deflate stream is shorter than its block map says");
    }
    out.write_all(&[0, 0, 0, 0xff, 0xff])?;
    Ok(whole + 5)
}

/// Copies the raw deflate stream `raw`, of which `consumed` bytes were
/// read already, from the byte-aligned block boundary `start` to the end
/// of its final block at bit `end`. Byte-aligned because a stored block
/// in the copied part pads to the next byte boundary: shifting it to
/// another bit offset would change what its padding is. Returns the bytes
/// written.
fn copy_tail(
    raw: &mut dyn Read,
    consumed: u64,
    start: u64,
    end: u64,
    out: &mut dyn Write,
) -> Result<u64> {
    if !start.is_multiple_of(8) {
        bail!("deflate streams are cut at byte-aligned block boundaries only");
    }
    let skip = (start / 8)
        .checked_sub(consumed)
        .context("deflate block map out of order")?;
    std::io::copy(&mut raw.take(skip), &mut std::io::sink())?;
    let len = end.div_ceil(8) - start / 8;
    if std::io::copy(&mut raw.take(len), out)? != len {
        bail!("the member's deflate stream is shorter than its block map says");
    }
    Ok(len)
}

/// Hashes the next `n` bytes of `src`; returns the last [`DICT`] of them
/// (the dictionary for deflating what follows).
fn hash_through(
    src: &mut dyn Read,
    n: u64,
    (sha, crc): (&mut Sha256, &mut Crc),
    name: &str,
) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; BUF];
    let mut left = n;
    let mut last = Vec::new();
    while left > 0 {
        let want = buf.len().min(left as usize);
        let k = read_full(src, &mut buf[..want])?;
        if k == 0 {
            bail!("{name}: the new content is shorter than the member it replaces");
        }
        sha.update(&buf[..k]);
        crc.update(&buf[..k]);
        left -= k as u64;
        last.extend_from_slice(&buf[..k]);
        let cut = last.len().saturating_sub(DICT);
        last.drain(..cut);
    }
    Ok(last)
}

/// Reads until `buf` is full or the source ends.
fn read_full(src: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Starts `jobs` threads in `scope` that compress the chunks sent on the
/// returned channel (until it is dropped), each answering on the job's own
/// reply channel.
fn spawn_compressors<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    jobs: usize,
    level: u32,
) -> mpsc::SyncSender<Job> {
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(jobs);
    let job_rx = Arc::new(Mutex::new(job_rx));
    for _ in 0..jobs {
        let job_rx = Arc::clone(&job_rx);
        scope.spawn(move || loop {
            let job = job_rx.lock().unwrap().recv();
            let Ok((dict, data, last, reply)) = job else {
                break;
            };
            let r = compress_chunk(level, &dict, &data, last);
            let mut crc = Crc::new();
            crc.update(&data);
            // The receiver may be gone after an error; nothing to do then.
            let _ = reply.send(r.map(|z| (z, crc, data)));
        });
    }
    job_tx
}

/// Raw-deflates one chunk: primed with `dict`, ended with a sync flush, or
/// with the final block if `last`.
///
/// Always with a fresh deflate state: a reset state keeps its old window
/// bytes, which deflate's match search reads past the valid data, so a
/// reused state made the output depend on which chunk a thread had
/// compressed before (that is, on scheduling and on --jobs).
fn compress_chunk(level: u32, dict: &[u8], data: &[u8], last: bool) -> Result<Vec<u8>> {
    let mut c = Compress::new(Compression::new(level), false);
    let c = &mut c;
    if !dict.is_empty() {
        c.set_dictionary(dict)
            .map_err(|e| anyhow::anyhow!("deflate dictionary: {e}"))?;
    }
    let mut out = Vec::with_capacity(data.len() + data.len() / 8 + 64);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    let start_in = c.total_in();
    loop {
        let consumed = (c.total_in() - start_in) as usize;
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity() / 2 + 64);
        }
        let status = c.compress_vec(&data[consumed..], &mut out, flush)?;
        let all_in = (c.total_in() - start_in) as usize == data.len();
        let room_left = out.capacity() > out.len();
        match status {
            Status::StreamEnd => break,
            _ if !last && all_in && room_left => break,
            _ => {}
        }
    }
    Ok(out)
}

/// Bit 11 (UTF-8 names) only when the name is not plain ASCII, like
/// Python's zipfile, so ASCII archives match what other tools write.
fn flags(name: &str) -> u16 {
    if name.is_ascii() {
        0
    } else {
        1 << 11
    }
}

fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn put64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// MS-DOS time and date for a unix time (UTC), clamped to the DOS range;
/// `None` is 1980-01-01 00:00:00.
pub fn dos_datetime(unix: Option<u64>) -> (u16, u16) {
    const MIN: u64 = 315_532_800; // 1980-01-01T00:00:00Z
    let t = unix.unwrap_or(MIN).max(MIN);
    let days = (t / 86400) as i64;
    let secs = t % 86400;
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    if y > 2107 {
        return (
            (23 << 11) | (59 << 5) | 29,
            ((127 << 9) | (12 << 5) | 31) as u16,
        );
    }
    let time = ((secs / 3600) << 11) | (((secs % 3600) / 60) << 5) | ((secs % 60) / 2);
    let date = ((y - 1980) << 9) | (m << 5) | d;
    (time as u16, date as u16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn dos_times() {
        assert_eq!(dos_datetime(None), (0, (1 << 5) | 1));
        assert_eq!(dos_datetime(Some(0)), (0, (1 << 5) | 1));
        // 2024-02-29T13:14:16Z
        let (t, d) = dos_datetime(Some(1_709_212_456));
        assert_eq!(d, ((2024 - 1980) << 9) | (2 << 5) | 29);
        assert_eq!(t, (13 << 11) | (14 << 5) | 8);
    }

    fn build(level: u32) -> Vec<u8> {
        let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, level);
        z.add_bytes("a.txt", b"hello hello hello hello", 0o644)
            .unwrap();
        z.add_bytes("bin/run", b"#!/bin/sh\n", 0o755).unwrap();
        z.add_bytes("empty", b"", 0o644).unwrap();
        z.add_bytes("d/\u{e9}.py", &vec![7u8; 300_000], 0o644)
            .unwrap();
        z.finish().unwrap().into_inner()
    }

    #[test]
    fn zip_crate_reads_it() {
        for level in [0, 1, 6, 9] {
            let bytes = build(level);
            let mut a = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
            assert_eq!(a.len(), 4);
            let mut f = a.by_name("a.txt").unwrap();
            let mut s = String::new();
            f.read_to_string(&mut s).unwrap();
            assert_eq!(s, "hello hello hello hello");
            drop(f);
            assert_eq!(a.by_name("bin/run").unwrap().unix_mode(), Some(0o100755));
            assert_eq!(a.by_name("a.txt").unwrap().unix_mode(), Some(0o100644));
            let mut f = a.by_name("d/\u{e9}.py").unwrap();
            assert_eq!(
                f.compression(),
                if level == 0 {
                    zip::CompressionMethod::Stored
                } else {
                    zip::CompressionMethod::Deflated
                }
            );
            let mut v = Vec::new();
            f.read_to_end(&mut v).unwrap();
            assert_eq!(v, vec![7u8; 300_000]);
        }
    }

    #[test]
    fn deterministic() {
        assert_eq!(build(6), build(6));
    }

    /// Deterministic, semi-compressible bytes (text-like with noise).
    pub(crate) fn sample(n: usize) -> Vec<u8> {
        let mut x: u32 = 12345;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if (x >> 16) & 3 == 0 {
                    (x >> 8) as u8
                } else {
                    b"the quick brown fox jumps over the lazy dog\n"[i % 44]
                }
            })
            .collect()
    }

    #[test]
    fn chunked_entries_are_one_valid_stream_for_any_thread_count() {
        // Not a multiple of CHUNK, so the last chunk is partial.
        let (chunked_min, chunk) = (256 * 1024, 64 * 1024);
        let data = sample(chunked_min + 2 * chunk + 12_345);
        let mut outputs = Vec::new();
        for jobs in [1, 2, 5] {
            let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
            z.set_jobs(jobs);
            (z.chunked_min, z.chunk) = (chunked_min as u64, chunk);
            let w = z.add_bytes("big.bin", &data, 0o644).unwrap();
            assert_eq!(w.sha256, <[u8; 32]>::from(Sha256::digest(&data)));
            outputs.push(z.finish().unwrap().into_inner());
        }
        assert!(
            outputs.iter().all(|o| *o == outputs[0]),
            "output depends on the thread count"
        );
        let mut a = zip::ZipArchive::new(Cursor::new(&outputs[0])).unwrap();
        let mut f = a.by_name("big.bin").unwrap();
        assert_eq!(f.compression(), zip::CompressionMethod::Deflated);
        let mut back = Vec::new();
        f.read_to_end(&mut back).unwrap(); // the zip crate checks the CRC
        assert!(back == data, "round trip differs");
        // The chained dictionaries keep the ratio of one single stream.
        let mut single =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        single.write_all(&data).unwrap();
        let single = single.finish().unwrap().len() as f64;
        let ratio = f.compressed_size() as f64 / single;
        assert!(ratio < 1.01, "chunked output is {ratio}x a single stream");
    }

    /// One deflate stream of `data` as another tool writes it (zlib
    /// level 6, no flushes), and its block map.
    fn foreign_stream(data: &[u8]) -> (Vec<u8>, DeflateMap) {
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        enc.write_all(data).unwrap();
        let raw = enc.finish().unwrap();
        let mut back = Vec::new();
        let map = crate::deflate_map::inflate_mapped(&mut &raw[..], &mut back).unwrap();
        assert!(back == data, "inflate_mapped inflates wrongly");
        assert_eq!(
            (map.size, map.end_bit.div_ceil(8)),
            (data.len() as u64, raw.len() as u64)
        );
        (raw, map)
    }

    /// What `add_spliced` needs of the member: its name, mode and time.
    fn spliced_entry(mode: u32) -> RawEntry {
        RawEntry::to_deflate("lib.so".into(), mode)
    }

    #[test]
    fn spliced_entries_equal_the_new_content_and_reuse_the_old_stream() {
        let data = sample(8 << 20);
        let (raw, map) = foreign_stream(&data);
        assert!(map.boundaries.len() >= 6, "{:?}", map.boundaries);
        let n = data.len() as u64;
        for (a, b) in [
            (3 << 20, (3 << 20) + 5000),
            (0, 10),
            (n - 10, n),
            (10, n - 10),
            (5 << 20, 6 << 20),
            (1 << 20, 7 << 20),
        ] {
            let mut new = data.clone();
            for c in &mut new[a as usize..b as usize] {
                *c = c.wrapping_add(1);
            }
            let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
            z.set_jobs(2);
            (z.chunked_min, z.chunk) = (256 * 1024, 64 * 1024);
            let e = spliced_entry(0o755);
            let w = z
                .add_spliced(&e, &mut &raw[..], &map, a..b, &mut &new[..])
                .unwrap();
            assert_eq!(w.sha256, <[u8; 32]>::from(Sha256::digest(&new)));
            let out = z.finish().unwrap().into_inner();
            let mut a_ = zip::ZipArchive::new(Cursor::new(&out)).unwrap();
            let mut f = a_.by_name("lib.so").unwrap();
            assert_eq!(f.unix_mode(), Some(0o100755));
            let mut back = Vec::new();
            f.read_to_end(&mut back).unwrap(); // the zip crate checks the CRC
            assert!(back == new, "{a}..{b}: spliced entry differs");
            // The stream ends with its final block, nothing after it.
            let (start, len) = (f.data_start() as usize, f.compressed_size() as usize);
            drop(f);
            let stream = &out[start..start + len];
            let mut d = flate2::read::DeflateDecoder::new(stream);
            std::io::copy(&mut d, &mut std::io::sink()).unwrap();
            assert_eq!(
                d.total_in() as usize,
                len,
                "{a}..{b}: bytes after the final block"
            );
            // The bytes before the cut are the old stream's.
            let (pre, post) = map.cuts(a..b);
            assert_eq!(
                stream[..(pre.bit / 8) as usize],
                raw[..(pre.bit / 8) as usize]
            );
            assert_eq!(pre.bit % 8, 0);
            if let Some(p) = post {
                let tail = &raw[(p.bit / 8) as usize..];
                assert!(
                    stream.ends_with(tail),
                    "{a}..{b}: the old stream's tail is not reused"
                );
            }
        }
    }

    #[test]
    fn a_change_outside_the_declared_range_is_refused() {
        let data = sample(4 << 20);
        let (raw, map) = foreign_stream(&data);
        let declared = (2 << 20)..(2 << 20) + 100;
        for (at, what) in [(100usize, "before"), ((4 << 20) - 100, "after")] {
            let mut new = data.clone();
            new[at] ^= 1;
            let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
            let e = spliced_entry(0o644);
            let err = z
                .add_spliced(&e, &mut &raw[..], &map, declared.clone(), &mut &new[..])
                .unwrap_err();
            let msg = format!("{err:#}");
            assert!(
                msg.contains(&format!("differs from the member's {what}")),
                "{msg}"
            );
        }
    }

    #[test]
    fn corrupt_and_truncated_streams_are_refused_when_mapping() {
        let (raw, _) = foreign_stream(&sample(300_000));
        let e =
            crate::deflate_map::inflate_mapped(&mut &raw[..raw.len() / 2], &mut std::io::sink())
                .unwrap_err();
        assert!(
            format!("{e:#}").contains("truncated deflate stream"),
            "{e:#}"
        );
        let bad = vec![0xffu8; 1000];
        let e =
            crate::deflate_map::inflate_mapped(&mut &bad[..], &mut std::io::sink()).unwrap_err();
        assert!(format!("{e:#}").contains("corrupt deflate stream"), "{e:#}");
    }

    /// Copies every entry of `bytes` raw into a new archive.
    fn raw_copy(bytes: &[u8], zip64: bool) -> Vec<u8> {
        let mut a = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
        if zip64 {
            z.force_zip64();
        }
        for i in 0..a.len() {
            let m = a.by_index_raw(i).unwrap();
            let t = m.last_modified().unwrap();
            let e = RawEntry {
                name: m.name().to_string(),
                method: if m.compression() == zip::CompressionMethod::Stored {
                    0
                } else {
                    8
                },
                crc: m.crc32(),
                compressed_size: m.compressed_size(),
                size: m.size(),
                mode: m.unix_mode().unwrap(),
                dos: (t.timepart(), t.datepart()),
            };
            z.add_raw(&e, m).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    #[test]
    fn raw_copies_round_trip() {
        for level in [0, 6] {
            let bytes = build(level);
            // The same writer settings: byte for byte the same archive.
            assert!(raw_copy(&bytes, false) == bytes, "level {level}");
            // ZIP64 headers: the same members.
            let copy = raw_copy(&bytes, true);
            let mut a = zip::ZipArchive::new(Cursor::new(&copy)).unwrap();
            let mut v = Vec::new();
            a.by_name("d/\u{e9}.py")
                .unwrap()
                .read_to_end(&mut v)
                .unwrap();
            assert_eq!(v, vec![7u8; 300_000]);
            assert_eq!(a.by_name("bin/run").unwrap().unix_mode(), Some(0o100755));
        }
        // Too few source bytes is an error, not a short member.
        let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
        let e = RawEntry {
            name: "x".into(),
            method: 8,
            crc: 0,
            compressed_size: 10,
            size: 10,
            mode: 0o644,
            dos: (0, 0),
        };
        let err = z.add_raw(&e, &b"abc"[..]).unwrap_err().to_string();
        assert!(err.contains("ended after 3 of 10"), "{err}");
    }

    #[test]
    fn overlong_names_are_rejected() {
        let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
        let e = z
            .add_bytes(&"\u{e9}".repeat(40_000), b"", 0o644)
            .unwrap_err()
            .to_string();
        assert!(e.contains("80000 bytes long"), "{e}");
    }

    #[test]
    fn wrong_length_is_an_error() {
        let mut z = ParallelZipWriter::new(Cursor::new(Vec::new()), None, 6);
        let e = z
            .add_reader("x", &b"abc"[..], 4, 0o644)
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed while it was read"), "{e}");
    }
}
