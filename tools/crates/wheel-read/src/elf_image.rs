//! Bounded-memory reading of ELF wheel members for parsing.
//!
//! A member can only be read front to back (it is deflated), its header's
//! size may lie, and a ROCm library can be hundreds of MB of code the
//! readers never look at. [`elf_image`] never allocates what a header
//! claims beyond [`ImageOptions::whole_max`]: a member whose header says it
//! fits is read whole in one pass; a larger one is streamed, keeping only
//! the byte ranges the parsers need (headers, dynamic section and
//! symbol/version tables, notes, section names, and sections asked for by
//! name), at most [`ImageOptions::keep_max`] bytes. Its image has the real
//! length with everything else zero: zero pages of a large zeroed
//! allocation are never touched, so they cost address space, not memory,
//! and offsets stay valid for the ELF parsers. Ranges fetched after the
//! length is known are written straight into the image, so each kept byte
//! is held once, and those passes stop after the last byte they need.
//! Works for ELF32 and ELF64 of either byte order.

use std::io::{self, Read, Write};

use anyhow::{anyhow, bail, Result};
use elf_read::raw::{
    PT_DYNAMIC, PT_LOAD, PT_NOTE, SHT_DYNAMIC, SHT_DYNSYM, SHT_GNU_VERDEF, SHT_GNU_VERNEED,
    SHT_GNU_VERSYM, SHT_NOBITS, SHT_NOTE, SHT_STRTAB,
};
use elf_read::{Elf, ReadAt, SectionHeader};

/// Runs a closure on a fresh reader positioned at the start of the member.
pub type Reopen<'a> = dyn FnMut(&mut dyn FnMut(&mut dyn Read) -> Result<()>) -> Result<()> + 'a;

#[derive(Debug, Clone, Copy)]
pub struct ImageOptions {
    /// Members up to this many bytes are kept whole.
    pub whole_max: u64,
    /// How much of the file start to keep (linkers put `.dynsym`,
    /// `.dynstr` and the version tables there); pass 2 fetches anything
    /// the section headers show elsewhere.
    pub head_cap: u64,
    /// Most bytes kept of a larger member; more is an error.
    pub keep_max: u64,
    /// Sections kept whole in addition to the ones the parsers need.
    pub want_sections: &'static [&'static str],
}

/// Members at most this big are read whole.
pub const WHOLE_MAX: u64 = 32 << 20;
/// How much of the start of a large member is kept at most.
pub const HEAD_CAP: u64 = 16 << 20;
/// Most bytes of one large member held in memory.
pub const KEEP_MAX: u64 = 256 << 20;

impl Default for ImageOptions {
    fn default() -> Self {
        ImageOptions {
            whole_max: WHOLE_MAX,
            head_cap: HEAD_CAP,
            keep_max: KEEP_MAX,
            want_sections: &[],
        }
    }
}

const SMALL_HEAD: u64 = 64 << 10;

/// What has been read of the member: an image of its real length, zero
/// outside `covered` (sorted, merged byte ranges). Bytes are written
/// straight into the image, so each kept byte is held once.
struct Kept {
    covered: Vec<(u64, u64)>,
    image: Vec<u8>,
}

impl Kept {
    /// Places what pass 2 kept into an image of the member's length,
    /// freeing each buffer once copied.
    fn assemble(s: Streamed) -> Result<Kept> {
        let mut image = zeroed(s.len)?;
        let mut covered = Vec::with_capacity(s.ranges.len());
        for (&(a, _), d) in s.ranges.iter().zip(s.data) {
            image[a as usize..a as usize + d.len()].copy_from_slice(&d);
            covered.push((a, a + d.len() as u64));
        }
        Ok(Kept {
            covered: merge(covered),
            image,
        })
    }

    fn get(&self, a: u64, b: u64) -> Option<&[u8]> {
        self.covered
            .iter()
            .any(|&(x, y)| x <= a && b <= y)
            .then(|| &self.image[a as usize..b as usize])
    }

    fn covers(&self, a: u64, b: u64) -> bool {
        a >= b || self.get(a, b).is_some()
    }

    /// Reads `needed` (ranges within the image) into the image, streaming
    /// the member only as far as the last byte still missing.
    fn fetch(&mut self, reopen: &mut Reopen, needed: &[(u64, u64)], keep_max: u64) -> Result<()> {
        let covered = merge(self.covered.iter().chain(needed).copied().collect());
        if covered.iter().map(|&(a, b)| b - a).sum::<u64>() > keep_max {
            bail!(too_large(keep_max));
        }
        let missing: Vec<(u64, u64)> = merge(needed.to_vec())
            .into_iter()
            .filter(|&(a, b)| !self.covers(a, b))
            .collect();
        let end = missing.last().map_or(0, |&(_, b)| b);
        let image = &mut self.image;
        reopen(&mut |r: &mut dyn Read| {
            let mut buf = vec![0u8; 64 << 10];
            let mut pos = 0u64;
            while pos < end {
                let n = r.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                copy_overlap(&missing, pos, &buf[..n], |at, bytes| {
                    if let Some(dst) = image.get_mut(at as usize..at as usize + bytes.len()) {
                        dst.copy_from_slice(bytes);
                    }
                });
                pos += n as u64;
            }
            Ok(())
        })?;
        self.covered = covered;
        Ok(())
    }
}

/// The ELF reader reads what was kept; anything else is missing.
impl ReadAt for Kept {
    fn size(&self) -> u64 {
        self.image.len() as u64
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let got = self.get(offset, end).ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(got);
        Ok(())
    }
}

fn too_large(keep_max: u64) -> String {
    format!(
        "the ELF tables to read are larger than {} MiB",
        keep_max >> 20
    )
}

/// Calls `put(offset, bytes)` for the parts of `buf` (read from `pos`)
/// that fall in `ranges`.
fn copy_overlap(ranges: &[(u64, u64)], pos: u64, buf: &[u8], mut put: impl FnMut(u64, &[u8])) {
    let end = pos + buf.len() as u64;
    for &(a, b) in ranges {
        let (lo, hi) = (a.max(pos), b.min(end));
        if lo < hi {
            put(lo, &buf[(lo - pos) as usize..(hi - pos) as usize]);
        }
    }
}

fn merge(mut r: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    r.retain(|&(a, b)| a < b);
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (a, b) in r {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// What pass 2 read: merged ranges, the bytes read of each (`data[i]`
/// from `ranges[i].0`), and the member's real length.
struct Streamed {
    ranges: Vec<(u64, u64)>,
    data: Vec<Vec<u8>>,
    len: u64,
}

/// Streams the whole member (its length is not known yet), keeping `keep`.
fn stream_ranges(reopen: &mut Reopen, keep: &[(u64, u64)], keep_max: u64) -> Result<Streamed> {
    struct Sink<'a> {
        ranges: &'a [(u64, u64)],
        data: Vec<Vec<u8>>,
        kept: u64,
        keep_max: u64,
        pos: u64,
    }
    impl Write for Sink<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let Sink {
                ranges,
                data,
                kept,
                keep_max,
                pos,
            } = self;
            copy_overlap(ranges, *pos, buf, |at, bytes| {
                let i = ranges.partition_point(|&(_, b)| b <= at);
                // Grows with the data actually read, not with the range.
                data[i].extend_from_slice(bytes);
                *kept += bytes.len() as u64;
            });
            if *kept > *keep_max {
                return Err(io::Error::other(too_large(*keep_max)));
            }
            *pos += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let ranges = merge(keep.to_vec());
    let mut sink = Sink {
        ranges: &ranges,
        data: vec![Vec::new(); ranges.len()],
        kept: 0,
        keep_max,
        pos: 0,
    };
    reopen(&mut |r: &mut dyn Read| {
        sink.pos = 0;
        io::copy(r, &mut sink)?;
        Ok(())
    })?;
    let (data, len) = (sink.data, sink.pos);
    Ok(Streamed { ranges, data, len })
}

/// Reads a member of at most `whole_max` bytes in one pass. The buffer is
/// sized from `declared`, which callers bound by `whole_max`.
fn whole(reopen: &mut Reopen, declared: u64) -> Result<(Vec<u8>, u64)> {
    let mut data = Vec::new();
    let mut len = 0;
    reopen(&mut |r: &mut dyn Read| {
        data = Vec::with_capacity(declared as usize);
        (&mut *r).take(declared + 1).read_to_end(&mut data)?;
        len = data.len() as u64;
        if len > declared {
            // Only to say how long it really is.
            data = Vec::new();
            len += io::copy(r, &mut io::sink())?;
        }
        Ok(())
    })?;
    Ok((data, len))
}

/// A zeroed buffer of `len` bytes, or an error if the system refuses the
/// address space (instead of aborting as `vec![0; len]` would).
fn zeroed(len: u64) -> Result<Vec<u8>> {
    let n = usize::try_from(len).map_err(|_| anyhow!("{len} bytes do not fit in memory"))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n)?;
    // SAFETY: non-zero size; on success the allocation has `n` zeroed
    // bytes with u8 alignment, which is what Vec::from_raw_parts needs.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        if p.is_null() {
            bail!("cannot reserve {len} bytes of address space for the ELF image");
        }
        Ok(Vec::from_raw_parts(p, n, n))
    }
}

/// The error for a member whose real length `got` is not the `declared`
/// one its zip header records.
fn check_len(got: u64, declared: u64) -> Result<()> {
    if got < declared {
        bail!("the zip entry is shorter than the {declared} bytes its header records ({got} bytes)")
    }
    if got > declared {
        bail!("the zip entry holds {got} bytes, more than the {declared} its header records")
    }
    Ok(())
}

/// Reads an ELF member for parsing with bounded memory; see the module
/// docs. `declared` is the size the zip header records: a member of
/// another length is an error (it is never used to allocate more than
/// `whole_max`).
pub fn elf_image(reopen: &mut Reopen, declared: u64, opts: &ImageOptions) -> Result<Vec<u8>> {
    if declared <= opts.whole_max {
        let (data, len) = whole(reopen, declared)?;
        check_len(len, declared)?;
        return Ok(data);
    }
    // Pass 1: the first bytes decide what pass 2 keeps.
    let mut head = Vec::new();
    reopen(&mut |r: &mut dyn Read| {
        head.clear();
        r.take(SMALL_HEAD).read_to_end(&mut head)?;
        Ok(())
    })?;
    let mut keep = vec![(0, head.len() as u64)];
    keep.extend(table_ranges(&head, opts.head_cap));
    // Pass 2: the whole member, for its length and the tables.
    let streamed = stream_ranges(reopen, &keep, opts.keep_max)?;
    let len = streamed.len;
    check_len(len, declared)?;
    let mut kept = Kept::assemble(streamed)?;
    let Some(t) = Sections::read(&kept) else {
        // Not ELF, or no section headers to go by: the parser reports a
        // broken header from what was kept.
        return Ok(kept.image);
    };
    // Passes 3 and 4: what the section headers show the parsers need (the
    // section names, once read, can add wanted sections).
    for _ in 0..2 {
        let needed = t.needed(&kept, len, opts.want_sections);
        if needed.iter().all(|&(a, b)| kept.covers(a, b)) {
            break;
        }
        kept.fetch(reopen, &needed, opts.keep_max)?;
    }
    t.blank_unread(&mut kept, len);
    Ok(kept.image)
}

/// What pass 2 keeps besides the head: the section header table, the bytes
/// before it (where .shstrtab usually sits) and, if the program headers
/// are in the head, the dynamic and note segments and the start of the
/// first PT_LOAD (up to `head_cap`).
fn table_ranges(head: &[u8], head_cap: u64) -> Vec<(u64, u64)> {
    let Ok(elf) = Elf::open(head) else {
        return Vec::new();
    };
    let h = &elf.header;
    let shoff = h.e_shoff;
    let table = u64::from(h.e_shentsize).saturating_mul(u64::from(h.e_shnum));
    let mut keep = vec![
        (shoff, shoff.saturating_add(table)),
        (shoff.saturating_sub(64 << 10), shoff),
    ];
    if let Ok(phdrs) = elf.program_headers() {
        let mut first_load_end = None;
        for ph in &phdrs {
            let end = ph.p_offset.saturating_add(ph.p_filesz);
            match ph.p_type {
                PT_LOAD if first_load_end.is_none() => first_load_end = Some(end),
                PT_DYNAMIC | PT_NOTE => keep.push((ph.p_offset, end)),
                _ => {}
            }
        }
        keep.push((0, first_load_end.unwrap_or(0).min(head_cap)));
    }
    keep
}

/// The section header table, read from what was kept.
struct Sections {
    shdrs: Vec<SectionHeader>,
    shstrndx: usize,
    /// Where each header's `sh_size` field is: the table's offset and
    /// entry size, and the field's offset and width in an entry.
    shoff: u64,
    shentsize: u64,
    size_field: (usize, usize),
}

impl Sections {
    /// The section headers of `kept`, if it is an ELF file with some.
    fn read(kept: &Kept) -> Option<Sections> {
        let elf = Elf::open(kept).ok()?;
        let shdrs = elf.section_headers().ok()?;
        if shdrs.is_empty() {
            return None;
        }
        Some(Sections {
            shstrndx: elf.shstrndx(&shdrs),
            shoff: elf.header.e_shoff,
            shentsize: u64::from(elf.header.e_shentsize),
            size_field: if elf.is_64() { (32, 8) } else { (20, 4) },
            shdrs,
        })
    }

    /// The byte ranges (clamped to `len`) of the sections the parsers
    /// need, of the sections named in `want`, and of their string tables.
    fn needed(&self, kept: &Kept, len: u64, want: &[&str]) -> Vec<(u64, u64)> {
        let mut needed = Vec::new();
        let range = |s: &SectionHeader| {
            (
                s.sh_offset.min(len),
                s.sh_offset.saturating_add(s.sh_size).min(len),
            )
        };
        let names = (self.shdrs.get(self.shstrndx))
            .map(range)
            .and_then(|(a, b)| kept.get(a, b));
        for (i, s) in self.shdrs.iter().enumerate() {
            if s.sh_type == SHT_NOBITS {
                continue;
            }
            let by_type = matches!(
                s.sh_type,
                SHT_DYNAMIC
                    | SHT_NOTE
                    | SHT_DYNSYM
                    | SHT_GNU_VERDEF
                    | SHT_GNU_VERNEED
                    | SHT_GNU_VERSYM
            ) || i == self.shstrndx;
            let by_name = names.is_some_and(|names| {
                let n = names.get(s.sh_name..).unwrap_or(&[]);
                let n = &n[..n.iter().position(|&c| c == 0).unwrap_or(n.len())];
                want.iter().any(|w| w.as_bytes() == n)
            });
            if by_type || by_name {
                needed.push(range(s));
                if s.sh_type != SHT_NOTE {
                    if let Some(l) = self.shdrs.get(s.sh_link as usize) {
                        if l.sh_type == SHT_STRTAB {
                            needed.push(range(l));
                        }
                    }
                }
            }
        }
        needed
    }

    /// Sections that were not read are zeros; marks them empty so parsers
    /// do not walk them (a zeroed string table parses as many empty
    /// strings).
    fn blank_unread(&self, kept: &mut Kept, len: u64) {
        let (field, width) = self.size_field;
        for (i, s) in self.shdrs.iter().enumerate() {
            let (a, b) = (
                s.sh_offset.min(len),
                s.sh_offset.saturating_add(s.sh_size).min(len),
            );
            if s.sh_type != SHT_NOBITS && !kept.covers(a, b) {
                let o = (self.shoff + i as u64 * self.shentsize) as usize + field;
                kept.image[o..o + width].fill(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Counts the bytes a pass reads.
    struct Counting<'a> {
        inner: &'a [u8],
        n: u64,
    }

    impl Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.n += n as u64;
            Ok(n)
        }
    }

    /// Runs [`elf_image`] over `data`; returns the result and the bytes
    /// each pass read.
    fn image_of(data: &[u8], declared: u64, opts: &ImageOptions) -> (Result<Vec<u8>>, Vec<u64>) {
        let reads = RefCell::new(Vec::new());
        let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| {
            let mut r = Counting { inner: data, n: 0 };
            let res = f(&mut r);
            reads.borrow_mut().push(r.n);
            res
        };
        let image = elf_image(&mut reopen, declared, opts);
        (image, reads.into_inner())
    }

    #[test]
    fn members_that_fit_are_read_whole_in_one_pass() {
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let opts = ImageOptions {
            whole_max: 8192,
            ..ImageOptions::default()
        };
        let (image, reads) = image_of(&data, 5000, &opts);
        assert_eq!(image.unwrap(), data);
        assert_eq!(reads, [5000]);
        let (image, _) = image_of(&data, 4000, &opts);
        let e = image.unwrap_err().to_string();
        assert!(e.contains("holds 5000 bytes, more than the 4000"), "{e}");
        let (image, _) = image_of(&data, 6000, &opts);
        let e = image.unwrap_err().to_string();
        assert!(e.contains("shorter than the 6000 bytes"), "{e}");
    }

    /// A wanted section of a real library comes out as in the file, a
    /// section nobody asked for as zeros, and the pass that fetches it
    /// stops before the end of the file.
    #[test]
    fn wanted_sections_are_fetched_and_the_rest_stays_zero() {
        let Ok(data) = std::fs::read("/usr/lib/x86_64-linux-gnu/libc.so.6") else {
            panic!("this test reads the machine's libc.so.6 (run it inside scripts/buildroot)");
        };
        let elf = Elf::open(&data[..]).unwrap();
        let range = |name: &str| {
            let (off, size) = elf.section_range(name).unwrap().unwrap();
            off as usize..(off + size) as usize
        };
        let (rodata, text) = (range(".rodata"), range(".text"));
        let opts = ImageOptions {
            whole_max: 0,
            head_cap: 0,
            want_sections: &[".rodata"],
            ..ImageOptions::default()
        };
        let (image, reads) = image_of(&data, data.len() as u64, &opts);
        let image = image.unwrap();
        assert_eq!(image.len(), data.len());
        assert_eq!(image[rodata.clone()], data[rodata]);
        assert!(image[text.clone()].iter().all(|&b| b == 0));
        assert!(data[text].iter().any(|&b| b != 0));
        assert_eq!(
            reads[1],
            data.len() as u64,
            "pass 2 reads it all: {reads:?}"
        );
        let last = *reads.last().unwrap();
        assert!(reads.len() > 2 && last < data.len() as u64, "{reads:?}");
    }
}
