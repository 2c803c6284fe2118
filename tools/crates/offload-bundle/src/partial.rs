//! Reading only some entries of a bundle. Thinning keeps a few code objects
//! of dozens: a compressed bundle is decoded as a stream only up to the end
//! of the last kept entry, the bytes between kept entries are decoded into a
//! scratch buffer and dropped, and only the kept entries are stored. Memory
//! grows with the bytes actually decoded, never with what a header claims.
//!
//! The CCOB hash covers the whole uncompressed bundle, so it cannot be
//! checked without decoding all of it; a corrupt stream is still caught by
//! the decoder itself, and a stream shorter than its entry table says is an
//! error.

use std::io::Read;

use anyhow::{bail, Context, Result};

use crate::read::{stream_decoder, stream_error, Bundle, Entry};
use crate::Method;

/// Scratch buffer for decoded bytes that are not kept.
const SKIP_BUF: usize = 1 << 20;

/// The data of `wanted` (entries of `head`, a bundle read with
/// [`crate::BundleIter::headers_only`]), in the order given. `bytes` is the
/// bundle's own extent in the input (`head.len` bytes from its start).
pub fn read_entries(head: &Bundle, bytes: &[u8], wanted: &[&Entry]) -> Result<Vec<Vec<u8>>> {
    let Some(h) = &head.compressed else {
        // Entries were bounds-checked against the bundle when it was parsed.
        return Ok(wanted
            .iter()
            .map(|e| bytes[e.offset as usize..(e.offset + e.size) as usize].to_vec())
            .collect());
    };
    let hsize = crate::ccob_header_size(h.version).context("compressed bundle version")?;
    let stream = bytes
        .get(hsize..)
        .context("truncated compressed bundle: shorter than its header")?;
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_by_key(|&i| wanted[i].offset);
    // LLVM's long-distance matching uses windows beyond zstd's default
    // decoding limit; what is decoded here is used.
    let mut reader = stream_decoder(h.method, stream, Some(31))?;
    let mut out = vec![Vec::new(); wanted.len()];
    let mut pos = 0u64;
    for i in order {
        let e = wanted[i];
        if e.offset < pos {
            bail!(
                "corrupt compressed bundle: entry `{}` (bytes {}..{}) overlaps another entry",
                e.id,
                e.offset,
                e.offset + e.size
            );
        }
        skip(&mut reader, e.offset - pos, h.method, &e.id)?;
        let got = (&mut reader)
            .take(e.size)
            .read_to_end(&mut out[i])
            .map_err(|err| stream_error(h.method, err))?;
        if got as u64 != e.size {
            bail!(
                "corrupt compressed bundle: the {} stream ends at byte {} but entry `{}` \
                 claims bytes {}..{}",
                h.method.name(),
                e.offset + got as u64,
                e.id,
                e.offset,
                e.offset + e.size
            );
        }
        pos = e.offset + e.size;
    }
    Ok(out)
}

/// Decodes and drops `n` bytes (the entries nobody keeps).
fn skip(r: &mut dyn Read, mut n: u64, method: Method, next: &str) -> Result<()> {
    let mut buf = vec![0u8; SKIP_BUF.min(n as usize)];
    while n > 0 {
        let want = buf.len().min(n as usize);
        let k = r
            .read(&mut buf[..want])
            .map_err(|e| stream_error(method, e))?;
        if k == 0 {
            bail!(
                "corrupt compressed bundle: the {} stream ends {n} bytes before entry `{next}` \
                 starts",
                method.name()
            );
        }
        n -= k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{read_bundle, BundleIter, Limits};
    use crate::write::{compress, layout_uncompressed};

    /// Entries of distinct, incompressible-ish contents; the last one is
    /// large so that stopping before it is visible in the bytes consumed.
    fn plain() -> Vec<u8> {
        let data = |seed: u8, n: usize| -> Vec<u8> {
            (0..n)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed)
                .collect()
        };
        let (a, b, c) = (data(1, 5000), data(2, 7000), data(3, 3 << 20));
        layout_uncompressed(&[
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-amdgcn-amd-amdhsa--gfx1200", &a),
            ("hipv4-amdgcn-amd-amdhsa--gfx1201", &b),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &c),
        ])
    }

    fn head(bytes: &[u8]) -> Bundle {
        BundleIter::new(bytes, &Limits::default())
            .headers_only()
            .next()
            .unwrap()
            .unwrap()
    }

    #[test]
    fn kept_entries_equal_a_full_read_in_every_format() {
        let p = plain();
        for bytes in [
            p.clone(),
            compress(&p, Method::Zstd, 3, None).unwrap(),
            compress(&p, Method::Zlib, 2, None).unwrap(),
        ] {
            let full = read_bundle(&bytes, &Limits::default()).unwrap();
            let h = head(&bytes);
            // Asked for out of order: answers come in the order asked.
            let wanted = [&h.entries[2], &h.entries[0], &h.entries[1]];
            let got = read_entries(&h, &bytes, &wanted).unwrap();
            for (e, d) in wanted.iter().zip(&got) {
                assert_eq!(d.as_slice(), full.entry_data(e), "{}", e.id);
            }
        }
    }

    #[test]
    fn decoding_stops_after_the_last_kept_entry() {
        // The stream cut short right after gfx1201's data still yields it:
        // nothing past the last kept entry is decoded.
        let p = plain();
        let h0 = head(&p);
        let end = (h0.entries[2].offset + h0.entries[2].size) as usize;
        let cut = compress(&p[..end], Method::Zstd, 3, None).unwrap();
        let bytes = compress(&p, Method::Zstd, 3, None).unwrap();
        let h = head(&bytes);
        let mut lying = cut.clone();
        // The header of the cut stream, with the full bundle's sizes.
        lying[8..16].copy_from_slice(&(cut.len() as u64).to_le_bytes());
        lying[16..24].copy_from_slice(&(p.len() as u64).to_le_bytes());
        let got = read_entries(&h, &lying, &[&h.entries[1], &h.entries[2]]).unwrap();
        assert_eq!(got[1].as_slice(), &p[h.entries[2].offset as usize..end]);
        // Asking for the entry past the cut is an error, not a short read.
        let e = read_entries(&h, &lying, &[&h.entries[3]]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("stream ends") && msg.contains("gfx942"),
            "{msg}"
        );
    }

    #[test]
    fn a_header_announcing_more_than_the_stream_holds_is_a_clean_error() {
        let p = plain();
        let mut bytes = compress(&p, Method::Zstd, 3, None).unwrap();
        // Claim a larger bundle and move the last entry past the real data.
        let big = p.len() as u64 + (64 << 20);
        bytes[16..24].copy_from_slice(&big.to_le_bytes());
        let mut h = head(&bytes);
        h.entries[3].offset = big - 1000;
        h.entries[3].size = 1000;
        let e = read_entries(&h, &bytes, &[&h.entries[3]]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("corrupt compressed bundle"), "{msg}");
        // Overlapping entries are refused too.
        h.entries[2].offset = h.entries[1].offset + 1;
        let e = read_entries(&h, &bytes, &[&h.entries[1], &h.entries[2]]).unwrap_err();
        assert!(format!("{e:#}").contains("overlaps"), "{e:#}");
    }
}
