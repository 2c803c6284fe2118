//! The writer: entries streamed from readers (large ones deflated in
//! parallel chunks), copied raw from another archive, or spliced into an
//! input member's deflate stream ([`splice`]), then the central directory.

mod splice;

use anyhow::{bail, Context, Result};
use flate2::Crc;
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::mpsc;

use crate::chunks::{read_full, spawn_compressors, ChunkResult, DICT};
use crate::records::{central_directory, dos_datetime, local_header, put32, put64, CdEntry};

/// The largest value a 32-bit field holds (ZIP64 from there on).
const U32_MAX: u64 = 0xFFFF_FFFF;
/// Entries at least this large get a ZIP64 local header up front: the
/// compressed size is only known afterwards and may exceed the input a bit.
const ZIP64_LOCAL_THRESHOLD: u64 = 0xF000_0000;
/// Read buffer of the one-thread copy and of hashing.
pub(crate) const BUF: usize = 256 * 1024;
/// Deflated entries this large are compressed in parallel chunks.
pub const CHUNKED_MIN: u64 = 4 << 20;
/// Chunk size: large enough that the sync-flush marker (5 bytes) and the
/// block restarts cost well under 0.1%, small enough to keep memory flat.
pub const CHUNK: usize = 1 << 20;

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
        let h = local_header(name, method, zip64, dos, known);
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

    /// Writes the central directory and returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        let cd = central_directory(&self.entries, self.pos, self.big);
        self.out.write_all(&cd)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

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

    #[test]
    fn chunked_entries_are_one_valid_stream_for_any_thread_count() {
        // Not a multiple of CHUNK, so the last chunk is partial.
        let (chunked_min, chunk) = (256 * 1024, 64 * 1024);
        let data = test_support::sample(chunked_min + 2 * chunk + 12_345);
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
