//! Bounded-memory reading of large ELF members.
//!
//! A wheel member can only be read front to back (it is deflated), and a
//! ROCm plugin `.so` can be hundreds of MB, almost all code and device
//! blobs the checker never looks at. [`sparse_image`] streams the member
//! into a zero-filled buffer of the full length but copies only the byte
//! ranges the checker parses; untouched pages of a large zeroed allocation
//! are never committed, so memory stays small while offsets stay valid for
//! the ELF parser.
//!
//! Pass 1 keeps the headers, the start of the file (where linkers put
//! `.dynsym`, `.dynstr` and `.gnu.version_r`), `PT_DYNAMIC`, the notes and
//! the section header table. If the section headers then show that a needed
//! section lies elsewhere, pass 2 re-reads the member keeping exactly those
//! sections, so the result never depends on the layout guess.

use std::io::{self, Read, Write};

use anyhow::{bail, Result};

/// Members at most this big are read whole.
pub const SPARSE_THRESHOLD: u64 = 32 << 20;
/// How much of the file start pass 1 keeps, at most.
pub const HEAD_CAP: u64 = 16 << 20;

const SHT_STRTAB: u32 = 3;
const SHT_NOBITS: u32 = 8;
const SHT_DYNAMIC: u32 = 6;
const SHT_NOTE: u32 = 7;
const SHT_DYNSYM: u32 = 11;
const SHT_GNU_VERDEF: u32 = 0x6fff_fffd;
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;
const SHT_GNU_VERSYM: u32 = 0x6fff_ffff;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_NOTE: u32 = 4;

#[cfg(test)]
thread_local! {
    static SECOND_PASSES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs a closure on a fresh reader positioned at the start of the member.
pub type Reopen<'a> = dyn FnMut(&mut dyn FnMut(&mut dyn Read) -> Result<()>) -> Result<()> + 'a;

struct Sink<'a> {
    buf: &'a mut [u8],
    keep: &'a [(u64, u64)],
    pos: u64,
}

impl Write for Sink<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let (start, end) = (self.pos, self.pos + data.len() as u64);
        for &(a, b) in self.keep {
            let (lo, hi) = (a.max(start), b.min(end));
            if lo < hi {
                self.buf[lo as usize..hi as usize]
                    .copy_from_slice(&data[(lo - start) as usize..(hi - start) as usize]);
            }
        }
        self.pos = end;
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn stream(reopen: &mut Reopen, buf: &mut [u8], keep: &[(u64, u64)]) -> Result<u64> {
    let mut written = 0;
    reopen(&mut |r: &mut dyn Read| {
        let mut sink = Sink { buf, keep, pos: 0 };
        written = io::copy(r, &mut sink)?;
        Ok(())
    })?;
    Ok(written)
}

/// 64-bit little-endian ELF header fields we need.
struct Header {
    phoff: u64,
    phentsize: u64,
    phnum: u64,
    shoff: u64,
    shentsize: u64,
    shnum: u64,
    shstrndx: u64,
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u16::from_le_bytes([b[o], b[o + 1]]) as u64
}
fn u32_at(b: &[u8], o: usize) -> u64 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as u64
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

fn header(b: &[u8]) -> Option<Header> {
    // ELFCLASS64, ELFDATA2LSB; anything else is read whole.
    if b.len() < 64 || b[4] != 2 || b[5] != 1 {
        return None;
    }
    Some(Header {
        phoff: u64_at(b, 32),
        shoff: u64_at(b, 40),
        phentsize: u16_at(b, 54),
        phnum: u16_at(b, 56),
        shentsize: u16_at(b, 58),
        shnum: u16_at(b, 60),
        shstrndx: u16_at(b, 62),
    })
}

fn covered(keep: &[(u64, u64)], a: u64, b: u64) -> bool {
    a >= b || keep.iter().any(|&(x, y)| x <= a && b <= y)
}

/// Read a member of `size` bytes for ELF parsing with bounded memory; see
/// the module docs. Falls back to reading everything for ELF variants it
/// does not handle (32-bit, big-endian, odd headers).
pub fn sparse_image(reopen: &mut Reopen, size: u64, head_cap: u64) -> Result<Vec<u8>> {
    let len = usize::try_from(size)?;
    // vec![0; n] is calloc: pages stay uncommitted until written.
    let mut buf = vec![0u8; len];
    let small_head = size.min(64 << 10);
    // Only the first bytes: the program headers decide what pass 1 keeps.
    reopen(&mut |r: &mut dyn Read| {
        r.read_exact(&mut buf[..small_head as usize]).map_err(|e| {
            anyhow::anyhow!(
                "the zip entry is shorter than the {size} bytes its header records ({e})"
            )
        })
    })?;
    let full = |reopen: &mut Reopen, buf: &mut Vec<u8>| -> Result<()> {
        let got = stream(reopen, buf, &[(0, size)])?;
        if got != size {
            bail!("the zip entry holds {got} bytes, not the {size} its header records");
        }
        Ok(())
    };
    let Some(h) = header(&buf) else {
        full(reopen, &mut buf)?;
        return Ok(buf);
    };
    let table = |off: u64, entsize: u64, num: u64| -> Option<(u64, u64)> {
        let end = off.checked_add(entsize.checked_mul(num)?)?;
        (end <= size).then_some((off, end))
    };
    let (Some(ph), Some(sh)) = (
        table(h.phoff, h.phentsize, h.phnum),
        table(h.shoff, h.shentsize, h.shnum),
    ) else {
        // Let the parser report the broken header from the full bytes.
        full(reopen, &mut buf)?;
        return Ok(buf);
    };
    if h.phentsize < 56 || (h.shnum > 0 && h.shentsize < 64) || ph.1 > small_head {
        full(reopen, &mut buf)?;
        return Ok(buf);
    }

    // Pass 1: guess from the program headers.
    let mut keep = vec![(0, small_head), sh];
    let mut first_load_end = None;
    for k in 0..h.phnum {
        let o = (h.phoff + k * h.phentsize) as usize;
        let (p_type, p_offset, p_filesz) = (
            u32_at(&buf, o) as u32,
            u64_at(&buf, o + 8),
            u64_at(&buf, o + 32),
        );
        let end = p_offset.saturating_add(p_filesz).min(size);
        match p_type {
            PT_LOAD if first_load_end.is_none() => first_load_end = Some(end),
            PT_DYNAMIC | PT_NOTE => keep.push((p_offset.min(size), end)),
            _ => {}
        }
    }
    keep.push((0, first_load_end.unwrap_or(0).min(head_cap).max(small_head)));
    // .shstrtab usually sits just before the section header table.
    keep.push((sh.0.saturating_sub(64 << 10), sh.0));
    let got = stream(reopen, &mut buf, &keep)?;
    if got != size {
        bail!("the zip entry holds {got} bytes, not the {size} its header records");
    }

    // Check the guess against the section headers.
    let mut needed: Vec<(u64, u64)> = Vec::new();
    let section = |buf: &[u8], i: u64| -> (u32, u64, u64, u64) {
        let o = (h.shoff + i * h.shentsize) as usize;
        (
            u32_at(buf, o + 4) as u32,
            u64_at(buf, o + 24),
            u64_at(buf, o + 32),
            u32_at(buf, o + 40),
        )
    };
    for i in 0..h.shnum {
        let (sh_type, off, sz, link) = section(&buf, i);
        let wanted = matches!(
            sh_type,
            SHT_DYNAMIC | SHT_NOTE | SHT_DYNSYM | SHT_GNU_VERDEF | SHT_GNU_VERNEED | SHT_GNU_VERSYM
        ) || i == h.shstrndx;
        if wanted {
            needed.push((off.min(size), off.saturating_add(sz).min(size)));
            if sh_type != SHT_NOTE && link < h.shnum {
                let (lt, loff, lsz, _) = section(&buf, link);
                if lt == SHT_STRTAB {
                    needed.push((loff.min(size), loff.saturating_add(lsz).min(size)));
                }
            }
        }
    }
    // A section reaching past the end means a truncated file: let the
    // parser see the real thing and report it.
    for i in 0..h.shnum {
        let (sh_type, off, sz, _) = section(&buf, i);
        if sh_type != SHT_NOBITS && past_end(off.checked_add(sz), size) {
            full(reopen, &mut buf)?;
            return Ok(buf);
        }
    }
    if !needed.iter().all(|&(a, b)| covered(&keep, a, b)) {
        #[cfg(test)]
        SECOND_PASSES.with(|c| c.set(c.get() + 1));
        // Pass 2: exactly what the section headers name.
        keep.extend(needed);
        stream(reopen, &mut buf, &keep)?;
    }
    // Sections that were not read are zeros; mark them empty so the parser
    // does not walk them (a zeroed string table would parse as millions of
    // empty strings).
    for i in 0..h.shnum {
        let (sh_type, off, sz, _) = section(&buf, i);
        if sh_type != SHT_NOBITS && !covered(&keep, off, off + sz) {
            let o = (h.shoff + i * h.shentsize) as usize + 32;
            buf[o..o + 8].copy_from_slice(&0u64.to_le_bytes());
        }
    }
    Ok(buf)
}

/// `None` (overflow) or a value above `limit`.
fn past_end(end: Option<u64>, limit: u64) -> bool {
    !matches!(end, Some(v) if v <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::read_elf;

    /// A [`Reopen`] over a plain file.
    fn file_reopen(path: &std::path::Path) -> Box<Reopen<'_>> {
        Box::new(move |f| {
            let mut file = std::fs::File::open(path)?;
            f(&mut file)
        })
    }

    /// Real libraries of this machine give identical facts read whole and
    /// read sparsely, with a generous head and with a head so small that
    /// pass 2 must fetch the dynamic sections.
    #[test]
    fn sparse_matches_full_on_system_libraries() {
        let libs = [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
            "/usr/lib/x86_64-linux-gnu/libm.so.6",
            "/usr/lib/x86_64-linux-gnu/libz.so.1",
        ];
        let mut checked = 0;
        for lib in libs {
            let path = std::path::Path::new(lib);
            let Ok(full) = std::fs::read(path) else {
                continue;
            };
            let want = read_elf(&full).unwrap();
            for cap in [HEAD_CAP, 0] {
                let mut reopen = file_reopen(path);
                let image = sparse_image(&mut *reopen, full.len() as u64, cap).unwrap();
                let got = read_elf(&image).unwrap();
                assert_eq!(got, want, "{lib} with head cap {cap}");
                // Sparse means sparse: most of the image stayed zero.
                let kept = image
                    .iter()
                    .zip(&full)
                    .filter(|(a, b)| a == b && **a != 0)
                    .count();
                let nonzero = full.iter().filter(|b| **b != 0).count();
                if cap == 0 && full.len() > (1 << 20) {
                    assert!(kept < nonzero, "{lib}: nothing was skipped");
                }
            }
            checked += 1;
        }
        assert!(
            checked >= 2,
            "expected system libraries under /usr/lib/x86_64-linux-gnu"
        );
        // The tiny head cap really exercised pass 2.
        assert!(SECOND_PASSES.with(|c| c.get()) > 0);
    }

    #[test]
    fn short_entries_are_errors() {
        let data = [0x7fu8, b'E', b'L', b'F', 2, 1, 1];
        let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| f(&mut &data[..]);
        let e = sparse_image(&mut reopen, 100, HEAD_CAP)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shorter than the 100 bytes"), "{e}");
    }
}
