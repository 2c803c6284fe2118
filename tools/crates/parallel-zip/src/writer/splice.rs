//! Writing an edited copy of an input member by reusing its deflate
//! stream around the edit ([`ParallelZipWriter::add_spliced`]).

use anyhow::{bail, Context, Result};
use flate2::Crc;
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, Write};

use super::{ParallelZipWriter, RawEntry, Written, BUF};
use crate::chunks::{read_full, DICT};
#[cfg(doc)]
use crate::deflate_map::inflate_mapped;
use crate::deflate_map::DeflateMap;

impl<W: Write + Seek> ParallelZipWriter<W> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// One deflate stream of `data` as another tool writes it (zlib
    /// level 6, no flushes), and its block map.
    fn foreign_stream(data: &[u8]) -> (Vec<u8>, DeflateMap) {
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        enc.write_all(data).unwrap();
        let raw = enc.finish().unwrap();
        let mut back = Vec::new();
        let map = crate::inflate_mapped(&mut &raw[..], &mut back).unwrap();
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
        let data = test_support::sample(8 << 20);
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
        let data = test_support::sample(4 << 20);
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
}
