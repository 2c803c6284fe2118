//! Reads just the parts of an ELF64 file the editor needs (headers, dynamic
//! array, dynamic string table) through positioned reads, so a 400 MB library
//! costs a few kilobytes of I/O, through the ELF reader (elf-read), with the
//! checks an edit needs on top.

use crate::error::{EditError, Result};
use elf_read::raw::{
    ET_DYN, ET_EXEC, PT_DYNAMIC, PT_LOAD, SHT_DYNAMIC, SHT_DYNSYM, SHT_STRTAB, SYM64_SIZE,
};
use elf_read::{Header, ProgramHeader, SectionHeader};

pub use elf_read::raw::{
    DYN64_SIZE as DYN_SIZE, EHDR64_SIZE as EHDR_SIZE, PHDR64_SIZE as PHDR_SIZE,
    SHDR64_SIZE as SHDR_SIZE,
};

use elf_read::raw::{DT_AUDIT, DT_CONFIG, DT_DEPAUDIT};
pub use elf_read::{DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME, DT_STRSZ, DT_STRTAB};
/// Other dynamic tags whose value is an offset into .dynstr.
const STRING_TAGS: [u64; 7] = [
    DT_NEEDED,
    DT_SONAME,
    0x7fff_fffd, // DT_AUXILIARY
    0x7fff_ffff, // DT_FILTER
    DT_CONFIG,
    DT_DEPAUDIT,
    DT_AUDIT,
];

pub use elf_read::{read_range, Dyn, FileSource, ReadAt};

/// The parsed facts the editor works from.
pub struct Parsed {
    pub file_len: u64,
    pub header: Header,
    pub phdrs: Vec<ProgramHeader>,
    pub shdrs: Vec<SectionHeader>,
    /// Index of PT_DYNAMIC in `phdrs`.
    pub dynamic_ph: usize,
    /// Entries before the first DT_NULL.
    pub dyns: Vec<Dyn>,
    /// Number of 16-byte slots PT_DYNAMIC provides (>= dyns.len() + 1).
    pub dyn_slots: u64,
    pub strtab_offset: u64,
    pub dynstr: Vec<u8>,
    /// Section header indices, when section headers describe them.
    pub dynstr_sh: Option<usize>,
    pub dynamic_sh: Option<usize>,
}

/// Checks the identification bytes first so the error says exactly which
/// unsupported flavour of ELF this is.
fn check_ident<S: ReadAt + ?Sized>(src: &S) -> Result<()> {
    const MAGIC: &[u8; 4] = elf_read::raw::ELFMAG;
    let len = src.size();
    let mut ident = [0u8; 16];
    let n = len.min(16) as usize;
    src.read_exact_at(&mut ident[..n], 0)?;
    let m = n.min(4);
    if ident[..m] != MAGIC[..m] || n == 0 {
        return Err(EditError::NotElf);
    }
    if n < 16 {
        return Err(EditError::Truncated("ELF identification".into()));
    }
    match ident[4] {
        2 => {}
        1 => return Err(EditError::Not64Bit),
        c => return Err(EditError::Malformed(format!("invalid ELF class {c}"))),
    }
    match ident[5] {
        1 => {}
        2 => return Err(EditError::BigEndian),
        d => {
            return Err(EditError::Malformed(format!(
                "invalid ELF data encoding {d}"
            )))
        }
    }
    Ok(())
}

/// An x86-64 file: what the rpath edits, which may grow the file and move
/// segments (page sizes, alignment), are written and tested for.
pub fn parse<S: ReadAt + ?Sized>(src: &S) -> Result<Parsed> {
    parse_for(src, &[elf_read::Arch::X86_64])
}

/// A file of any of `machines`: for edits that move no byte (the symbol
/// version tables of the glibc floor), which do not depend on the CPU.
pub fn parse_for<S: ReadAt + ?Sized>(src: &S, machines: &[elf_read::Arch]) -> Result<Parsed> {
    check_ident(src)?;
    let file_len = src.size();
    let elf = elf_read::Elf::open(src)?;
    let header = check_header(elf.header, machines)?;
    let phdrs = elf.program_headers()?;
    let shdrs = read_section_headers(&elf)?;

    let dynamic_ph = phdrs
        .iter()
        .position(|p| p.p_type == PT_DYNAMIC)
        .ok_or(EditError::NoDynamic)?;
    check_loads(&phdrs)?;
    let dph = &phdrs[dynamic_ph];
    let dynamic = elf.dynamic(&phdrs)?.ok_or(EditError::NoDynamic)?;
    check_dynamic(&dynamic)?;
    let (strtab_offset, dynstr) = elf.dynamic_strings(&phdrs, &dynamic)?;
    let strtab_vaddr = dynamic.value(DT_STRTAB).unwrap_or_default();
    let dyn_slots = dynamic.slots;
    let dyns = dynamic.entries;

    let dynstr_sh = shdrs.iter().position(|s| {
        s.sh_type == SHT_STRTAB && s.sh_offset == strtab_offset && s.sh_addr == strtab_vaddr
    });
    let dynamic_sh = shdrs
        .iter()
        .position(|s| s.sh_type == SHT_DYNAMIC && s.sh_offset == dph.p_offset);

    Ok(Parsed {
        file_len,
        header,
        phdrs,
        shdrs,
        dynamic_ph,
        dyns,
        dyn_slots,
        strtab_offset,
        dynstr,
        dynstr_sh,
        dynamic_sh,
    })
}

/// The ELF header of an executable or shared library for one of `machines`.
fn check_header(header: Header, machines: &[elf_read::Arch]) -> Result<Header> {
    if !machines.iter().any(|m| m.e_machine() == header.e_machine) {
        return Err(EditError::WrongMachine(
            header.e_machine,
            machines
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    if header.e_type != ET_EXEC && header.e_type != ET_DYN {
        return Err(EditError::WrongType(header.e_type));
    }
    // The editor writes program headers of this size.
    if header.e_phnum > 0 && u64::from(header.e_phentsize) != PHDR_SIZE {
        return Err(EditError::Malformed(format!(
            "program header entry size {} (expected {PHDR_SIZE})",
            header.e_phentsize
        )));
    }
    Ok(header)
}

/// The section header table, or none: e_shnum == 0 with a table present
/// means extended numbering; such files (> 65279 sections) are not shared
/// libraries in practice, so the section headers are then simply left
/// alone.
fn read_section_headers<S: ReadAt + ?Sized>(elf: &elf_read::Elf<S>) -> Result<Vec<SectionHeader>> {
    let header = &elf.header;
    if header.e_shoff == 0 || header.e_shnum == 0 {
        return Ok(Vec::new());
    }
    if u64::from(header.e_shentsize) != SHDR_SIZE {
        return Err(EditError::Malformed(format!(
            "section header entry size {} (expected {SHDR_SIZE})",
            header.e_shentsize
        )));
    }
    Ok(elf.section_headers()?)
}

/// Refuses PT_LOADs a loader would refuse or tools disagree about.
fn check_loads(phdrs: &[ProgramHeader]) -> Result<()> {
    if !phdrs.iter().any(|p| p.p_type == PT_LOAD) {
        return Err(EditError::Malformed("no PT_LOAD segment".into()));
    }
    // Loaders and tools disagree about bytes past p_memsz; such a file is
    // broken anyway (readelf: "file size is larger than its memory size").
    // The loader requires PT_LOADs in ascending, disjoint address order;
    // tools that map addresses to file offsets rely on it too.
    let mut prev_end = 0u64;
    for ph in phdrs.iter().filter(|p| p.p_type == PT_LOAD) {
        let end = ph.p_vaddr.checked_add(ph.p_memsz);
        let fend = ph.p_offset.checked_add(ph.p_filesz);
        match (end, fend) {
            (Some(end), Some(_)) if ph.p_vaddr >= prev_end => prev_end = end,
            _ => {
                return Err(EditError::Malformed(format!(
                    "PT_LOAD at vaddr {:#x} (+{:#x}) overlaps or precedes the previous one",
                    ph.p_vaddr, ph.p_memsz
                )))
            }
        }
    }
    if let Some(ph) = phdrs
        .iter()
        .find(|p| p.p_type == PT_LOAD && p.p_filesz > p.p_memsz)
    {
        return Err(EditError::Malformed(format!(
            "PT_LOAD at offset {:#x} has p_filesz {:#x} > p_memsz {:#x}",
            ph.p_offset, ph.p_filesz, ph.p_memsz
        )));
    }
    Ok(())
}

/// Refuses an unterminated dynamic array and a repeated DT_STRTAB or
/// DT_STRSZ.
fn check_dynamic(d: &elf_read::Dynamic) -> Result<()> {
    if !d.terminated {
        return Err(EditError::Malformed(
            "the dynamic array has no DT_NULL terminator".into(),
        ));
    }
    let dyns = &d.entries;
    for tag in [DT_STRTAB, DT_STRSZ] {
        if dyns.iter().filter(|d| d.tag == tag).count() > 1 {
            return Err(EditError::Malformed(format!(
                "the dynamic section has more than one {} entry",
                if tag == DT_STRTAB {
                    "DT_STRTAB"
                } else {
                    "DT_STRSZ"
                }
            )));
        }
    }
    Ok(())
}

impl Parsed {
    /// Whether the section headers are consistent enough to rewrite
    /// (indices in range, contents inside the file, symbol tables of whole
    /// Elf64_Sym entries, sections not overlapping the ELF or program
    /// headers). Otherwise they are left in their order and nothing they
    /// describe is moved or rewritten.
    pub fn sane_sections(&self) -> bool {
        use elf_read::raw::{SHF_INFO_LINK, SHT_NOBITS, SHT_REL, SHT_RELA, SHT_SYMTAB};
        let n = self.shdrs.len();
        let table_end = self.header.e_phoff + self.phdrs.len() as u64 * PHDR_SIZE;
        (self.header.e_shstrndx as usize) < n
            && self.shdrs.iter().enumerate().all(|(i, s)| {
                let in_file = s.sh_type == SHT_NOBITS
                    || s.sh_size == 0
                    || s.sh_offset
                        .checked_add(s.sh_size)
                        .is_some_and(|e| e <= self.file_len);
                let clear_of_headers = i == 0
                    || s.sh_type == SHT_NOBITS
                    || s.sh_size == 0
                    || (s.sh_offset >= table_end
                        || s.sh_offset.saturating_add(s.sh_size) <= self.header.e_phoff)
                        && s.sh_offset >= EHDR_SIZE;
                let info_ok = !(s.sh_flags & u64::from(SHF_INFO_LINK) != 0
                    || s.sh_type == SHT_REL
                    || s.sh_type == SHT_RELA)
                    || (s.sh_info as usize) < n;
                let sym_ok = !(s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM)
                    || (s.sh_entsize == SYM64_SIZE && s.sh_size % SYM64_SIZE == 0);
                (s.sh_link as usize) < n && in_file && clear_of_headers && info_ok && sym_ok
            })
    }

    /// The NUL-terminated string at `off` in .dynstr.
    pub fn str_at(&self, off: u64) -> Result<&[u8]> {
        elf_read::str_at(&self.dynstr, off).ok_or_else(|| {
            EditError::Malformed(format!(
                "string offset {off:#x} is outside .dynstr or its string is not NUL-terminated"
            ))
        })
    }

    /// Offsets into .dynstr used by anything other than DT_RPATH/DT_RUNPATH:
    /// string-valued dynamic tags and dynamic symbol names. The linker merges
    /// string tails, so overwriting an rpath in place is only safe when none
    /// of these point into it.
    pub fn other_string_refs<S: ReadAt + ?Sized>(&self, src: &S) -> Result<Vec<u64>> {
        let mut refs: Vec<u64> = self
            .dyns
            .iter()
            .filter(|d| STRING_TAGS.contains(&d.tag))
            .map(|d| d.val)
            .collect();
        if let Some(ds) = self.dynstr_sh {
            for sh in &self.shdrs {
                if sh.sh_type == SHT_DYNSYM && sh.sh_link as usize == ds {
                    let syms = read_range(src, sh.sh_offset, sh.sh_size, ".dynsym section")?;
                    // st_name is an Elf64_Sym's first word.
                    refs.extend(
                        syms.chunks_exact(SYM64_SIZE as usize)
                            .map(|s| u64::from(u32::from_le_bytes(s[..4].try_into().unwrap()))),
                    );
                }
            }
        }
        Ok(refs)
    }
}
