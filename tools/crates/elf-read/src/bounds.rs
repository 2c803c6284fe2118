//! Bounds: every table, segment and section with bytes in the file lies
//! inside it, checked on a [`Parsed`] file ([`Parsed::check_bounds`]) or,
//! for an ELF64 file, before anything but the headers is decoded
//! ([`check_layout64`]), so a file cut short is reported as such.

use crate::names::pt_to_str;
use crate::raw::{
    EHDR64_SIZE as EHDR_SIZE, PHDR64_SIZE as PHDR_SIZE, PN_XNUM, PT_NULL, SHDR64_SIZE as SHDR_SIZE,
    SHN_XINDEX, SHT_NOBITS, SHT_NULL,
};
use crate::{Elf, Error, Parsed, Result};

impl Parsed<'_> {
    /// Checks that every segment and section the loader would read lies
    /// inside the file, so a truncated file is reported instead of half
    /// read; [`Error::Invalid`] names the first that does not.
    pub fn check_bounds(&self) -> Result<()> {
        let len = self.bytes.len() as u64;
        for (i, ph) in self.program_headers().iter().enumerate() {
            let end = ph.p_offset.checked_add(ph.p_filesz);
            if !matches!(end, Some(e) if e <= len) {
                return invalid(format!(
                    "program header {i} ({}) covers bytes {}..{} but the file has {len} bytes",
                    pt_to_str(ph.p_type),
                    ph.p_offset,
                    ph.p_offset.saturating_add(ph.p_filesz)
                ));
            }
        }
        for (i, sh) in self.section_headers().iter().enumerate() {
            if sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL {
                continue;
            }
            let end = sh.sh_offset.checked_add(sh.sh_size);
            if !matches!(end, Some(e) if e <= len) {
                let name = self.section_name(sh).unwrap_or("?");
                return invalid(format!(
                    "section {i} ({name}) covers bytes {}..{} but the file has {len} bytes",
                    sh.sh_offset,
                    sh.sh_offset.saturating_add(sh.sh_size)
                ));
            }
        }
        Ok(())
    }
}

fn invalid<T>(why: String) -> Result<T> {
    Err(Error::Invalid(why))
}

/// `start..start+len`, or `None` on overflow.
fn span(start: u64, len: u64) -> Option<(u64, u64)> {
    Some((start, start.checked_add(len)?))
}

/// Errors unless `what` (at `start`, `len` bytes) lies within the file.
fn within(size: u64, what: &str, start: u64, len: u64) -> Result<()> {
    match span(start, len) {
        Some((_, b)) if b <= size => Ok(()),
        Some((a, b)) => invalid(format!(
            "truncated ELF: {what} (bytes {a}..{b}) ends past the end of the file \
             ({size} bytes); the file was cut short — rebuild or copy it again"
        )),
        None => invalid(format!(
            "corrupt ELF: {what} has offset {start} and size {len}, which overflow"
        )),
    }
}

/// Checks the layout of an ELF64 LSB file (the caller has checked the magic
/// and class) before its tables are decoded, so the error can say exactly
/// what is cut off: the ELF header, the header tables (extended numbering
/// resolved) and every segment and section with bytes in the file lie
/// inside it. [`Error::Invalid`] says what does not.
pub fn check_layout64(data: &[u8]) -> Result<()> {
    let size = data.len() as u64;
    if size < EHDR_SIZE {
        return invalid(format!(
            "truncated ELF: the file is {size} bytes, shorter than the {EHDR_SIZE}-byte \
             ELF64 header; the file was cut short — rebuild or copy it again"
        ));
    }
    let elf = Elf::open(data)?;
    let (phnum, shnum, shstrndx) = tables(&elf, size)?;
    check_segments(&elf, size, phnum)?;
    check_sections(&elf, data, shnum, shstrndx)
}

/// Checks the ELF header and that the section header table lies within
/// the file, resolving extended numbering. Returns the number of program
/// headers, of section headers (none if there is no table) and the index
/// of the section name table.
fn tables(elf: &Elf<'_, [u8]>, size: u64) -> Result<(u64, u64, u64)> {
    let h = &elf.header;
    let ehsize = u64::from(h.e_ehsize);
    if ehsize < EHDR_SIZE {
        return invalid(format!(
            "corrupt ELF: e_ehsize is {ehsize}, an ELF64 header has {EHDR_SIZE} bytes"
        ));
    }
    within(size, "the ELF header", 0, ehsize)?;
    let shoff = h.e_shoff;
    let mut phnum = u64::from(h.e_phnum);
    let (shentsize, mut shnum) = (u64::from(h.e_shentsize), u64::from(h.e_shnum));
    let mut shstrndx = u64::from(h.e_shstrndx);

    // Section headers first: with extended numbering section 0 holds the
    // real counts.
    if shoff != 0 {
        if shentsize < SHDR_SIZE {
            return invalid(format!(
                "corrupt ELF: e_shentsize is {shentsize}, an ELF64 section header has {SHDR_SIZE} bytes"
            ));
        }
        if shnum == 0 || phnum == u64::from(PN_XNUM) || shstrndx == u64::from(SHN_XINDEX) {
            within(
                size,
                "section header 0 (extended ELF numbering)",
                shoff,
                shentsize,
            )?;
            let sh0 = elf.section_header(0)?;
            if shnum == 0 {
                shnum = sh0.sh_size;
            }
            if phnum == u64::from(PN_XNUM) {
                phnum = u64::from(sh0.sh_info);
            }
            if shstrndx == u64::from(SHN_XINDEX) {
                shstrndx = u64::from(sh0.sh_link);
            }
        }
        let table = shentsize.saturating_mul(shnum);
        within(
            size,
            &format!("the section header table ({shnum} entries)"),
            shoff,
            table,
        )?;
    } else {
        shnum = 0;
    }
    if shnum > 0 && shstrndx >= shnum {
        return invalid(format!(
            "corrupt ELF: e_shstrndx is {shstrndx} but there are {shnum} sections"
        ));
    }
    Ok((phnum, shnum, shstrndx))
}

/// The program header table and every segment's contents lie within the
/// file.
fn check_segments(elf: &Elf<'_, [u8]>, size: u64, phnum: u64) -> Result<()> {
    let (phoff, phentsize) = (elf.header.e_phoff, u64::from(elf.header.e_phentsize));
    if phnum == 0 {
        return Ok(());
    }
    if phentsize < PHDR_SIZE {
        return invalid(format!(
            "corrupt ELF: e_phentsize is {phentsize}, an ELF64 program header has {PHDR_SIZE} bytes"
        ));
    }
    let table = phentsize.saturating_mul(phnum);
    within(
        size,
        &format!("the program header table ({phnum} entries)"),
        phoff,
        table,
    )?;
    let phdrs = elf.program_headers_n(Some(phnum))?;
    for (k, ph) in phdrs.iter().enumerate() {
        if ph.p_type == PT_NULL {
            continue;
        }
        let p_type = ph.p_type;
        within(
            size,
            &format!("segment {k} (p_type {p_type:#x})"),
            ph.p_offset,
            ph.p_filesz,
        )?;
    }
    Ok(())
}

/// Every section's contents lie within the file (named, if the section
/// name table itself is intact).
fn check_sections(elf: &Elf<'_, [u8]>, data: &[u8], shnum: u64, shstrndx: u64) -> Result<()> {
    let size = data.len() as u64;
    let section = |i: u64| elf.section_header(i);
    let names: Option<&[u8]> = match shnum {
        0 => None,
        _ => {
            let s = section(shstrndx)?;
            span(s.sh_offset, s.sh_size).and_then(|(a, b)| {
                (s.sh_type != SHT_NOBITS && b <= size).then(|| &data[a as usize..b as usize])
            })
        }
    };
    let section_name = |sh_name: usize| -> Option<String> {
        let rest = names?.get(sh_name..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    for i in 1..shnum {
        let s = section(i)?;
        if s.sh_type == SHT_NULL || s.sh_type == SHT_NOBITS {
            continue;
        }
        let what = match section_name(s.sh_name) {
            Some(n) => format!("section {i} `{n}`"),
            None => format!("section {i}"),
        };
        within(size, &what, s.sh_offset, s.sh_size)?;
    }
    Ok(())
}
