//! Inflating a member while noting where its deflate stream can be cut.
//!
//! A deflate stream is a sequence of blocks, each starting at a bit (not
//! byte) offset; a block's matches reach at most 32 KiB back into the
//! output. So when an edit changes only the bytes `a..b` of a member, the
//! input's blocks that end before `a` decode to the same bytes in the
//! output, and so do the blocks that start 32 KiB or more after `b`: only
//! the part between is deflated again ([`crate::ParallelZipWriter::add_spliced`]).
//! zlib reports block boundaries when inflating with `Z_BLOCK`, in
//! `data_type`; zlib-rs's safe API does not expose it, so this module
//! drives its zlib-style stream API directly.

use std::io::{Read, Write};

use anyhow::{bail, Result};
use flate2::Crc;
use zlib_rs::c_api::z_stream;
use zlib_rs::inflate::{end, inflate, init, InflateStream};
use zlib_rs::{InflateConfig, InflateFlush, ReturnCode};

/// A block boundary: its bit offset in the compressed stream and its byte
/// offset in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boundary {
    pub bit: u64,
    pub out: u64,
    /// CRC-32 of the output before it.
    pub crc: u32,
}

/// Byte-aligned block boundaries of a raw deflate stream (the stream's
/// start and at most one per [`MAP_STEP`] of output, so memory stays small
/// whatever the input's block sizes) and its end. Only byte-aligned ones:
/// the blocks after a cut are copied as bytes, and a stored block among
/// them must keep its padding to the byte boundary.
#[derive(Debug, Clone)]
pub struct DeflateMap {
    pub boundaries: Vec<Boundary>,
    /// Bit offset just past the final block.
    pub end_bit: u64,
    /// Uncompressed size.
    pub size: u64,
    pub crc: u32,
}

const START: Boundary = Boundary {
    bit: 0,
    out: 0,
    crc: 0,
};

/// Spacing of the recorded boundaries in the output.
pub const MAP_STEP: u64 = 1 << 20;
/// How far back deflate matches reach.
pub const WINDOW: u64 = 32 * 1024;

impl DeflateMap {
    /// The boundaries to cut at for an edit of the bytes `changed`: the
    /// last one at or before its start, and the first one at least
    /// [`WINDOW`] past its end (`None`: deflate again to the end).
    pub fn cuts(&self, changed: std::ops::Range<u64>) -> (Boundary, Option<Boundary>) {
        let prefix = self
            .boundaries
            .iter()
            .rev()
            .find(|b| b.out <= changed.start)
            .copied()
            .unwrap_or(START);
        let suffix = self
            .boundaries
            .iter()
            .find(|b| b.out >= changed.end.saturating_add(WINDOW) && b.out < self.size)
            .copied();
        (prefix, suffix)
    }

    /// CRC-32 of the output from `b` to the end (from the whole's and the
    /// part before `b`: CRC-32 is linear).
    pub fn crc_after(&self, b: &Boundary) -> u32 {
        let mut before = crc32fast::Hasher::new_with_initial_len(b.crc, b.out);
        before.combine(&crc32fast::Hasher::new_with_initial_len(
            0,
            self.size - b.out,
        ));
        self.crc ^ before.finalize()
    }
}

/// A zlib-rs raw inflate state, ended when dropped.
struct Inflater {
    strm: Box<z_stream>,
}

impl Inflater {
    fn new() -> Result<Inflater> {
        let mut strm = Box::<z_stream>::default();
        if init(&mut strm, InflateConfig { window_bits: -15 }) != ReturnCode::Ok {
            bail!("cannot start inflating (zlib-rs init failed)");
        }
        Ok(Inflater { strm })
    }

    /// One `inflate(Z_BLOCK)` call: input consumed, output written, the
    /// return code.
    fn step(&mut self, input: &[u8], output: &mut [u8]) -> (usize, usize, ReturnCode) {
        let s = &mut *self.strm;
        s.next_in = input.as_ptr();
        s.avail_in = input.len().min(u32::MAX as usize) as u32;
        s.next_out = output.as_mut_ptr();
        s.avail_out = output.len().min(u32::MAX as usize) as u32;
        let (in0, out0) = (s.avail_in, s.avail_out);
        // SAFETY: the stream was initialized by `init` and not ended; the
        // pointers cover `input` and `output`, which outlive the call.
        let rc = unsafe {
            match InflateStream::from_stream_mut(s) {
                Some(st) => inflate(st, InflateFlush::Block),
                None => ReturnCode::StreamError,
            }
        };
        let s = &*self.strm;
        (
            (in0 - s.avail_in) as usize,
            (out0 - s.avail_out) as usize,
            rc,
        )
    }

    /// Bits loaded from the input but not yet used, whether the decoder
    /// stands at a block boundary, and whether the block before it was the
    /// final one (zlib's `data_type`).
    fn state(&self) -> (u64, bool, bool) {
        let d = self.strm.data_type;
        ((d & 63) as u64, d & 128 != 0, d & 64 != 0)
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: initialized by `init`, ended only here.
        if let Some(st) = unsafe { InflateStream::from_stream_mut(&mut *self.strm) } {
            end(st);
        }
    }
}

/// Inflates the raw deflate stream `src` into `dst`, mapping its blocks.
/// Errors on a corrupt or truncated stream.
pub fn inflate_mapped(src: &mut dyn Read, dst: &mut dyn Write) -> Result<DeflateMap> {
    let mut z = Inflater::new()?;
    let mut inbuf = vec![0u8; 256 << 10];
    let mut outbuf = vec![0u8; 256 << 10];
    let (mut in_len, mut in_pos, mut eof) = (0usize, 0usize, false);
    let (mut total_in, mut total_out) = (0u64, 0u64);
    let mut crc = Crc::new();
    let mut map = vec![START];
    // Where the final block ends: seen at the boundary after it, before
    // the decoder skips the padding to the next byte.
    let mut end_bit = None;
    loop {
        if in_pos == in_len && !eof {
            in_len = src.read(&mut inbuf)?;
            in_pos = 0;
            eof = in_len == 0;
        }
        let (used, made, rc) = z.step(&inbuf[in_pos..in_len], &mut outbuf);
        in_pos += used;
        total_in += used as u64;
        dst.write_all(&outbuf[..made])?;
        crc.update(&outbuf[..made]);
        total_out += made as u64;
        let (pending, at_boundary, last) = z.state();
        if at_boundary && last {
            end_bit.get_or_insert(total_in * 8 - pending);
        }
        match rc {
            ReturnCode::StreamEnd => {
                return Ok(DeflateMap {
                    boundaries: map,
                    end_bit: end_bit.unwrap_or(total_in * 8 - pending),
                    size: total_out,
                    crc: crc.sum(),
                });
            }
            ReturnCode::Ok | ReturnCode::BufError => {}
            other => bail!("corrupt deflate stream ({other:?}) at compressed byte {total_in}"),
        }
        let bit = total_in * 8 - pending;
        let spaced = total_out >= map.last().map_or(0, |b| b.out) + MAP_STEP;
        if at_boundary && !last && bit.is_multiple_of(8) && spaced {
            map.push(Boundary {
                bit,
                out: total_out,
                crc: crc.sum(),
            });
        }
        if used == 0 && made == 0 && eof {
            bail!(
                "truncated deflate stream: it ends after {total_in} bytes without its final block"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_and_truncated_streams_are_refused_when_mapping() {
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
        enc.write_all(&test_support::sample(300_000)).unwrap();
        let raw = enc.finish().unwrap();
        let e = inflate_mapped(&mut &raw[..raw.len() / 2], &mut std::io::sink()).unwrap_err();
        assert!(
            format!("{e:#}").contains("truncated deflate stream"),
            "{e:#}"
        );
        let bad = vec![0xffu8; 1000];
        let e = inflate_mapped(&mut &bad[..], &mut std::io::sink()).unwrap_err();
        assert!(format!("{e:#}").contains("corrupt deflate stream"), "{e:#}");
    }
}
