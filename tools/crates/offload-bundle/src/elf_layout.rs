//! Structural check of an ELF64 little-endian file: every table and every
//! segment/section with file contents lies within the file. The bundle
//! writer runs it on code objects so a file cut short (an interrupted copy,
//! a full disk) is refused instead of being bundled and failing to load on
//! the GPU at run time. Hand-written rather than goblin so the messages can
//! say exactly what is cut off, and so it works without the `elf` feature.

use anyhow::{bail, Result};

const EHDR_SIZE: u64 = 64;
const PHDR_SIZE: u64 = 56;
const SHDR_SIZE: u64 = 64;
const PT_NULL: u32 = 0;
const SHT_NULL: u32 = 0;
const SHT_NOBITS: u32 = 8;
/// `e_phnum` value saying the real count is in section 0's `sh_info`.
const PN_XNUM: u64 = 0xffff;
/// `e_shstrndx` value saying the real index is in section 0's `sh_link`.
const SHN_XINDEX: u64 = 0xffff;

fn u16_at(b: &[u8], o: u64) -> u64 {
    let o = o as usize;
    u16::from_le_bytes([b[o], b[o + 1]]) as u64
}
fn u32_at(b: &[u8], o: u64) -> u64 {
    let o = o as usize;
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as u64
}
fn u64_at(b: &[u8], o: u64) -> u64 {
    let o = o as usize;
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// `start..start+len`, or `None` on overflow.
fn span(start: u64, len: u64) -> Option<(u64, u64)> {
    Some((start, start.checked_add(len)?))
}

/// Errors unless `what` (at `start`, `len` bytes) lies within the file.
fn within(name: &str, size: u64, what: &str, start: u64, len: u64) -> Result<()> {
    match span(start, len) {
        Some((_, b)) if b <= size => Ok(()),
        Some((a, b)) => bail!(
            "{name}: truncated ELF: {what} (bytes {a}..{b}) ends past the end of the file \
             ({size} bytes); the file was cut short — rebuild or copy it again"
        ),
        None => {
            bail!("{name}: corrupt ELF: {what} has offset {start} and size {len}, which overflow")
        }
    }
}

/// Checks the layout of an ELF64 LSB file (the caller has checked the magic
/// and class). `name` is used in errors.
pub fn check_elf64_layout(data: &[u8], name: &str) -> Result<()> {
    let (ph, sh, shstrndx) = tables(data, name)?;
    check_segments(data, name, &ph)?;
    check_sections(data, name, &sh, shstrndx)
}

/// A header table: file offset, entry size, number of entries.
struct Table {
    off: u64,
    entsize: u64,
    num: u64,
}

/// Reads the ELF header's table fields, resolving extended numbering, and
/// checks that the header and the section header table lie within the file.
/// Returns the program header table, the section header table (no entries
/// if there is none) and the index of the section name table.
fn tables(data: &[u8], name: &str) -> Result<(Table, Table, u64)> {
    let size = data.len() as u64;
    if size < EHDR_SIZE {
        bail!(
            "{name}: truncated ELF: the file is {size} bytes, shorter than the {EHDR_SIZE}-byte \
             ELF64 header; the file was cut short — rebuild or copy it again"
        );
    }
    let ehsize = u16_at(data, 52);
    if ehsize < EHDR_SIZE {
        bail!("{name}: corrupt ELF: e_ehsize is {ehsize}, an ELF64 header has {EHDR_SIZE} bytes");
    }
    within(name, size, "the ELF header", 0, ehsize)?;
    let (phoff, shoff) = (u64_at(data, 32), u64_at(data, 40));
    let (phentsize, mut phnum) = (u16_at(data, 54), u16_at(data, 56));
    let (shentsize, mut shnum) = (u16_at(data, 58), u16_at(data, 60));
    let mut shstrndx = u16_at(data, 62);

    // Section headers first: with extended numbering section 0 holds the
    // real counts.
    if shoff != 0 {
        if shentsize < SHDR_SIZE {
            bail!(
                "{name}: corrupt ELF: e_shentsize is {shentsize}, an ELF64 section header has {SHDR_SIZE} bytes"
            );
        }
        if shnum == 0 || phnum == PN_XNUM || shstrndx == SHN_XINDEX {
            within(
                name,
                size,
                "section header 0 (extended ELF numbering)",
                shoff,
                shentsize,
            )?;
            if shnum == 0 {
                shnum = u64_at(data, shoff + 32);
            }
            if phnum == PN_XNUM {
                phnum = u32_at(data, shoff + 44);
            }
            if shstrndx == SHN_XINDEX {
                shstrndx = u32_at(data, shoff + 40);
            }
        }
        let table = shentsize.saturating_mul(shnum);
        within(
            name,
            size,
            &format!("the section header table ({shnum} entries)"),
            shoff,
            table,
        )?;
    } else {
        shnum = 0;
    }
    if shnum > 0 && shstrndx >= shnum {
        bail!("{name}: corrupt ELF: e_shstrndx is {shstrndx} but there are {shnum} sections");
    }
    let ph = Table {
        off: phoff,
        entsize: phentsize,
        num: phnum,
    };
    let sh = Table {
        off: shoff,
        entsize: shentsize,
        num: shnum,
    };
    Ok((ph, sh, shstrndx))
}

/// The program header table and every segment's contents lie within the
/// file.
fn check_segments(data: &[u8], name: &str, ph: &Table) -> Result<()> {
    let size = data.len() as u64;
    let (phoff, phentsize, phnum) = (ph.off, ph.entsize, ph.num);
    if phnum == 0 {
        return Ok(());
    }
    if phentsize < PHDR_SIZE {
        bail!(
            "{name}: corrupt ELF: e_phentsize is {phentsize}, an ELF64 program header has {PHDR_SIZE} bytes"
        );
    }
    let table = phentsize.saturating_mul(phnum);
    within(
        name,
        size,
        &format!("the program header table ({phnum} entries)"),
        phoff,
        table,
    )?;
    for k in 0..phnum {
        let o = phoff + k * phentsize;
        let p_type = u32_at(data, o) as u32;
        if p_type == PT_NULL {
            continue;
        }
        let (off, filesz) = (u64_at(data, o + 8), u64_at(data, o + 32));
        within(
            name,
            size,
            &format!("segment {k} (p_type {p_type:#x})"),
            off,
            filesz,
        )?;
    }
    Ok(())
}

/// Every section's contents lie within the file (named, if the section
/// name table itself is intact).
fn check_sections(data: &[u8], name: &str, sh: &Table, shstrndx: u64) -> Result<()> {
    let size = data.len() as u64;
    let section = |i: u64| -> (u64, u32, u64, u64) {
        let o = sh.off + i * sh.entsize;
        (
            u32_at(data, o),
            u32_at(data, o + 4) as u32,
            u64_at(data, o + 24),
            u64_at(data, o + 32),
        )
    };
    let names: Option<&[u8]> =
        (sh.num > 0)
            .then(|| section(shstrndx))
            .and_then(|(_, ty, off, len)| {
                let (a, b) = span(off, len)?;
                (ty != SHT_NOBITS && b <= size).then(|| &data[a as usize..b as usize])
            });
    let section_name = |sh_name: u64| -> Option<String> {
        let rest = names?.get(sh_name as usize..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    for i in 1..sh.num {
        let (sh_name, sh_type, off, len) = section(i);
        if sh_type == SHT_NULL || sh_type == SHT_NOBITS {
            continue;
        }
        let what = match section_name(sh_name) {
            Some(n) => format!("section {i} `{n}`"),
            None => format!("section {i}"),
        };
        within(name, size, &what, off, len)?;
    }
    Ok(())
}
