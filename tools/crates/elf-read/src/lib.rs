//! The one ELF reader of the tools: the ELF header, the program and
//! section headers, sections by name and the dynamic array with its
//! strings, for ELF32 and ELF64 of either byte order.
//!
//! Access is by positioned reads ([`ReadAt`]) of only the bytes asked
//! for: a file of hundreds of MB (a ROCm library unpacked by `thin`, a
//! file `rpath set` edits) costs a few KB of I/O, and bytes in memory (a
//! wheel member's sparse image) are read the same way. goblin decodes each
//! structure; its whole-file `Elf::parse` is not used by these readers
//! because it needs every byte in memory and walks symbol and relocation
//! tables that they never look at ([`Parsed`] is that parse, for callers
//! that want those tables).
//!
//! # What it owns
//!
//! The tools' ELF knowledge lives here, and only this crate calls goblin
//! (elf-edit's fuzz oracle and tests use it apart, as a second opinion on
//! edited files):
//!
//! * [`raw`]: the constants (`PT_*`, `SHT_*`, `EM_*`, [`EM_AMDGPU`], ...)
//!   and ELF64 structure sizes; the header types ([`Header`],
//!   [`ProgramHeader`], [`SectionHeader`]) are goblin's plain structs;
//! * classification: [`ElfKind`] (`ET_DYN` with an interpreter is an
//!   executable) and [`Arch`] (the host CPU of a header);
//! * [`names`]: machine, type and segment names for reports;
//! * [`Parsed`], the whole-file parse of a file in memory, which is the
//!   validity check (every table parses), with its symbols and version
//!   needs ([`Symbol`]), the x86-64 ISA level of its GNU property note and
//!   the check that its segments and sections lie inside the file
//!   ([`Parsed::check_bounds`]);
//! * [`check_layout64`]: the same bounds, header tables too, of an ELF64
//!   file before its tables are decoded (a code object cut short).

use std::fmt;

mod bounds;
pub mod names;
mod notes;
mod parsed;
pub mod raw;
mod symbols;

pub use bounds::check_layout64;
use goblin::container::{Container, Ctx, Endian};
pub use goblin::elf::header::Header;
pub use goblin::elf::program_header::ProgramHeader;
pub use goblin::elf::section_header::SectionHeader;
pub use parsed::Parsed;
pub use raw::{
    DT_NEEDED, DT_NULL, DT_RPATH, DT_RUNPATH, DT_SONAME, DT_STRSZ, DT_STRTAB, EM_AMDGPU,
};
use raw::{PT_DYNAMIC, PT_LOAD, SHN_XINDEX, SHT_NOBITS};
pub use symbols::Symbol;

/// What an ELF file is, by its type and whether it names a program
/// interpreter: `ET_DYN` with `PT_INTERP` is a position-independent
/// executable (a Python interpreter), not a shared object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ElfKind {
    SharedObject,
    Executable,
    Relocatable,
    Other,
}

impl ElfKind {
    /// The kind of a file with `e_type`, with or without `PT_INTERP`.
    pub fn of(e_type: u16, has_interpreter: bool) -> ElfKind {
        use raw::{ET_DYN, ET_EXEC, ET_REL};
        match e_type {
            ET_DYN if has_interpreter => ElfKind::Executable,
            ET_DYN => ElfKind::SharedObject,
            ET_EXEC => ElfKind::Executable,
            ET_REL => ElfKind::Relocatable,
            _ => ElfKind::Other,
        }
    }

    /// In words, for reports: "shared object", "executable", ...
    pub fn as_str(self) -> &'static str {
        match self {
            ElfKind::SharedObject => "shared object",
            ElfKind::Executable => "executable",
            ElfKind::Relocatable => "relocatable",
            ElfKind::Other => "other",
        }
    }
}

/// A CPU whose Linux host code the tools know (64-bit, little endian), by
/// the name Python's platform tags and `uname -m` give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// `x86_64`, `aarch64`: the platform tag suffix.
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The `e_machine` of its ELF files.
    pub fn e_machine(self) -> u16 {
        match self {
            Arch::X86_64 => raw::EM_X86_64,
            Arch::Aarch64 => raw::EM_AARCH64,
        }
    }

    /// The architecture of an ELF header's host code; `None` for other
    /// CPUs, 32-bit or big-endian files (aarch64_be is another platform)
    /// and device code.
    pub fn of_header(header: &Header) -> Option<Arch> {
        use raw::{EI_CLASS, EI_DATA, ELFCLASS64, ELFDATA2LSB};
        let host64 =
            header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_ident[EI_DATA] == ELFDATA2LSB;
        Arch::ALL
            .into_iter()
            .find(|a| host64 && a.e_machine() == header.e_machine)
    }

    /// From its name (`x86_64`, `aarch64`).
    pub fn from_name(name: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What went wrong reading an ELF file.
#[derive(Debug)]
pub enum Error {
    Io(std::io::Error),
    /// No `\x7fELF` magic.
    NotElf,
    /// The named structure lies (partly) past the end of the input.
    Truncated(String),
    /// Internally inconsistent.
    Malformed(String),
    /// A whole-file check ([`Parsed`], [`check_layout64`]) found a table
    /// that does not parse or a part past the end; the message says what,
    /// and is shown as it is.
    Invalid(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::NotElf => write!(f, "not an ELF file (no \\x7fELF magic)"),
            Error::Truncated(what) => write!(f, "truncated ELF: the {what} ends past the end"),
            Error::Malformed(what) => write!(f, "corrupt ELF: {what}"),
            Error::Invalid(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Random access to the input: a file or bytes in memory.
pub trait ReadAt {
    fn size(&self) -> u64;
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
        {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

/// A file and its length (taken once, when opened).
pub struct FileSource {
    pub file: std::fs::File,
    pub len: u64,
}

impl FileSource {
    pub fn new(file: std::fs::File) -> std::io::Result<FileSource> {
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }
}

impl ReadAt for FileSource {
    fn size(&self) -> u64 {
        self.len
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }
}

/// Reads `len` bytes at `offset`, after checking they lie inside the
/// input (so a lying header cannot make us allocate more than its size).
pub fn read_range<S: ReadAt + ?Sized>(
    src: &S,
    offset: u64,
    len: u64,
    what: &str,
) -> Result<Vec<u8>> {
    match offset.checked_add(len) {
        Some(end) if end <= src.size() => {}
        _ => return Err(Error::Truncated(what.to_string())),
    }
    let mut buf = vec![0u8; len as usize];
    src.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// Maps a virtual address range to a file offset through the PT_LOAD that
/// holds it in file-backed bytes.
pub fn vaddr_to_offset(phdrs: &[ProgramHeader], vaddr: u64, len: u64) -> Option<u64> {
    phdrs.iter().find_map(|ph| {
        let end = vaddr.checked_add(len)?;
        let seg_end = ph.p_vaddr.checked_add(ph.p_filesz)?;
        if ph.p_type == PT_LOAD && ph.p_vaddr <= vaddr && end <= seg_end {
            ph.p_offset.checked_add(vaddr - ph.p_vaddr)
        } else {
            None
        }
    })
}

/// One entry of the dynamic array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dyn {
    pub tag: u64,
    pub val: u64,
}

/// An ELF file opened for reading: its identification and header.
pub struct Elf<'a, S: ?Sized> {
    src: &'a S,
    pub header: Header,
    ctx: Ctx,
}

impl<'a, S: ReadAt + ?Sized> Elf<'a, S> {
    /// Reads the identification and the ELF header.
    pub fn open(src: &'a S) -> Result<Self> {
        let mut ident = [0u8; 16];
        let n = src.size().min(16) as usize;
        src.read_exact_at(&mut ident[..n], 0)?;
        if n < 4 || ident[..4] != *raw::ELFMAG {
            return Err(Error::NotElf);
        }
        let (container, size) = match ident[4] {
            1 => (Container::Little, 52),
            2 => (Container::Big, 64),
            c => return Err(Error::Malformed(format!("invalid ELF class {c}"))),
        };
        let endian = match ident[5] {
            1 => Endian::Little,
            2 => Endian::Big,
            d => return Err(Error::Malformed(format!("invalid ELF data encoding {d}"))),
        };
        let bytes = read_range(src, 0, size, "ELF header")?;
        let header: Header = match container {
            Container::Big => goblin::elf64::header::Header::parse(&bytes).map(Into::into),
            Container::Little => goblin::elf32::header::Header::parse(&bytes).map(Into::into),
        }
        .map_err(|e| Error::Malformed(format!("ELF header: {e}")))?;
        Ok(Elf {
            src,
            header,
            ctx: Ctx::new(container, endian),
        })
    }

    pub fn is_64(&self) -> bool {
        self.ctx.container == Container::Big
    }

    pub fn is_little_endian(&self) -> bool {
        self.ctx.le == Endian::Little
    }

    /// The program headers (none if the table is empty); `e_phnum`
    /// entries, or `count` when given (extended numbering: section 0's
    /// `sh_info`).
    pub fn program_headers_n(&self, count: Option<u64>) -> Result<Vec<ProgramHeader>> {
        let h = &self.header;
        let size = ProgramHeader::size(self.ctx) as u64;
        let n = count.unwrap_or(u64::from(h.e_phnum));
        if n == 0 {
            return Ok(Vec::new());
        }
        let entsize = u64::from(h.e_phentsize);
        if entsize < size {
            return Err(Error::Malformed(format!(
                "e_phentsize is {entsize}, a program header has {size} bytes"
            )));
        }
        let ctx = self.ctx;
        self.table(("program header", h.e_phoff, entsize, n), |b, o| {
            ProgramHeader::parse(b, o, 1, ctx)
        })
    }

    /// The `n` entries `entsize` bytes apart at `off` of a header table,
    /// each decoded by `parse` (from the table's bytes and an offset).
    fn table<T>(
        &self,
        (what, off, entsize, n): (&str, u64, u64, u64),
        parse: impl Fn(&[u8], usize) -> goblin::error::Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        let table = format!("{what} table");
        let len = n
            .checked_mul(entsize)
            .ok_or(Error::Truncated(table.clone()))?;
        let bytes = read_range(self.src, off, len, &table)?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            let one = parse(&bytes, (i * entsize) as usize)
                .map_err(|e| Error::Malformed(format!("{what} {i}: {e}")))?;
            out.extend(one);
        }
        Ok(out)
    }

    /// The program headers (none if the table is empty).
    pub fn program_headers(&self) -> Result<Vec<ProgramHeader>> {
        self.program_headers_n(None)
    }

    /// Section header `i`.
    pub fn section_header(&self, i: u64) -> Result<SectionHeader> {
        let h = &self.header;
        let size = SectionHeader::size(self.ctx) as u64;
        let off = i
            .checked_mul(u64::from(h.e_shentsize))
            .and_then(|o| o.checked_add(h.e_shoff))
            .ok_or(Error::Truncated(format!("section header {i}")))?;
        let bytes = read_range(self.src, off, size, &format!("section header {i}"))?;
        let mut one = SectionHeader::parse_from(&bytes, 0, 1, self.ctx)
            .map_err(|e| Error::Malformed(format!("section header {i}: {e}")))?;
        Ok(one.remove(0))
    }

    /// The section headers (none if there is no table), with the extended
    /// numbering of files with more than 65279 sections resolved.
    pub fn section_headers(&self) -> Result<Vec<SectionHeader>> {
        let h = &self.header;
        let size = SectionHeader::size(self.ctx) as u64;
        if h.e_shoff == 0 {
            return Ok(Vec::new());
        }
        if u64::from(h.e_shentsize) < size {
            return Err(Error::Malformed(format!(
                "e_shentsize is {}, a section header has {size} bytes",
                h.e_shentsize
            )));
        }
        let entsize = u64::from(h.e_shentsize);
        let mut n = u64::from(h.e_shnum);
        if n == 0 {
            n = self.section_header(0)?.sh_size;
        }
        let ctx = self.ctx;
        self.table(("section header", h.e_shoff, entsize, n), |b, o| {
            SectionHeader::parse_from(b, o, 1, ctx)
        })
    }

    /// The index of the section name table, extended numbering resolved.
    pub fn shstrndx(&self, shdrs: &[SectionHeader]) -> usize {
        match self.header.e_shstrndx {
            i if u32::from(i) == SHN_XINDEX => shdrs.first().map_or(0, |s| s.sh_link as usize),
            i => i as usize,
        }
    }

    /// The section named `name` (the first one), if any.
    pub fn section(&self, shdrs: &[SectionHeader], name: &str) -> Result<Option<SectionHeader>> {
        if shdrs.is_empty() {
            return Ok(None);
        }
        let ndx = self.shstrndx(shdrs);
        let Some(names) = shdrs.get(ndx) else {
            return Err(Error::Malformed(format!(
                "e_shstrndx is {ndx} but there are {} sections",
                shdrs.len()
            )));
        };
        let names = read_range(
            self.src,
            names.sh_offset,
            names.sh_size,
            "section name table",
        )?;
        Ok(shdrs.iter().skip(1).find_map(|s| {
            let rest = names.get(s.sh_name..)?;
            let n = &rest[..rest.iter().position(|&c| c == 0).unwrap_or(rest.len())];
            (n == name.as_bytes()).then(|| s.clone())
        }))
    }

    /// File offset and size of section `name`'s contents (`None`: no such
    /// section, or one without bytes in the file), checked to lie in the
    /// input.
    pub fn section_range(&self, name: &str) -> Result<Option<(u64, u64)>> {
        let shdrs = self.section_headers()?;
        let Some(s) = self.section(&shdrs, name)? else {
            return Ok(None);
        };
        if s.sh_type == SHT_NOBITS {
            return Ok(None);
        }
        match s.sh_offset.checked_add(s.sh_size) {
            Some(e) if e <= self.src.size() => Ok(Some((s.sh_offset, s.sh_size))),
            _ => Err(Error::Truncated(format!(
                "section {name} (bytes {}..{}+{})",
                s.sh_offset, s.sh_offset, s.sh_size
            ))),
        }
    }

    /// The dynamic array (entries before the first DT_NULL, and whether
    /// there is one) of PT_DYNAMIC; `None` without PT_DYNAMIC.
    pub fn dynamic(&self, phdrs: &[ProgramHeader]) -> Result<Option<Dynamic>> {
        let Some(ph) = phdrs.iter().find(|p| p.p_type == PT_DYNAMIC) else {
            return Ok(None);
        };
        let word = if self.is_64() { 8 } else { 4 };
        let bytes = read_range(self.src, ph.p_offset, ph.p_filesz, "dynamic section")?;
        let word_at = |b: &[u8]| -> u64 {
            match (word, self.is_little_endian()) {
                (8, true) => u64::from_le_bytes(b.try_into().unwrap()),
                (8, false) => u64::from_be_bytes(b.try_into().unwrap()),
                (_, true) => u32::from_le_bytes(b.try_into().unwrap()) as u64,
                (_, false) => u32::from_be_bytes(b.try_into().unwrap()) as u64,
            }
        };
        let mut entries = Vec::new();
        let mut terminated = false;
        for chunk in bytes.chunks_exact(2 * word) {
            let (tag, val) = (word_at(&chunk[..word]), word_at(&chunk[word..]));
            if tag == DT_NULL {
                terminated = true;
                break;
            }
            entries.push(Dyn { tag, val });
        }
        Ok(Some(Dynamic {
            entries,
            terminated,
            slots: ph.p_filesz / (2 * word) as u64,
            offset: ph.p_offset,
        }))
    }

    /// The dynamic string table DT_STRTAB and DT_STRSZ point to: its file
    /// offset (the address mapped through the PT_LOADs) and bytes.
    pub fn dynamic_strings(&self, phdrs: &[ProgramHeader], d: &Dynamic) -> Result<(u64, Vec<u8>)> {
        let strtab = (d.value(DT_STRTAB))
            .ok_or_else(|| Error::Malformed("no DT_STRTAB in the dynamic section".into()))?;
        let strsz = (d.value(DT_STRSZ))
            .ok_or_else(|| Error::Malformed("no DT_STRSZ in the dynamic section".into()))?;
        let offset = vaddr_to_offset(phdrs, strtab, strsz).ok_or_else(|| {
            Error::Malformed(format!(
                "DT_STRTAB {strtab:#x} (+{strsz:#x}) is not inside a loaded segment"
            ))
        })?;
        Ok((
            offset,
            read_range(self.src, offset, strsz, "dynamic string table")?,
        ))
    }
}

/// The dynamic array of PT_DYNAMIC.
#[derive(Clone, Debug)]
pub struct Dynamic {
    /// The entries before the first DT_NULL.
    pub entries: Vec<Dyn>,
    /// Whether a DT_NULL ends them.
    pub terminated: bool,
    /// The number of entries PT_DYNAMIC has room for.
    pub slots: u64,
    /// PT_DYNAMIC's file offset.
    pub offset: u64,
}

impl Dynamic {
    /// The value of the first entry with tag `tag`.
    pub fn value(&self, tag: u64) -> Option<u64> {
        self.entries.iter().find(|d| d.tag == tag).map(|d| d.val)
    }
}

/// The NUL-terminated string at `off` in `strtab` (`None`: outside it, or
/// not terminated).
pub fn str_at(strtab: &[u8], off: u64) -> Option<&[u8]> {
    let rest = strtab.get(usize::try_from(off).ok()?..)?;
    Some(&rest[..rest.iter().position(|&b| b == 0)?])
}

/// What the dynamic array says about loading a file, in file order:
/// DT_SONAME, DT_NEEDED, DT_RPATH and DT_RUNPATH (each RPATH and RUNPATH
/// value split at `:`, empty entries kept: glibc reads an empty entry as
/// the current directory, which `check` reports).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DynamicFacts {
    pub needed: Vec<String>,
    pub soname: Option<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

/// How loading `src` is set up; all empty for a file without a dynamic
/// array. Lenient as goblin's whole-file parse, which the callers run
/// first: a DT_STRTAB outside the PT_LOADs is taken as a file offset, and
/// a missing or unreadable string table gives no strings.
pub fn dynamic_facts<S: ReadAt + ?Sized>(src: &S) -> Result<DynamicFacts> {
    let elf = Elf::open(src)?;
    let phdrs = elf.program_headers()?;
    let Some(d) = elf.dynamic(&phdrs)? else {
        return Ok(DynamicFacts::default());
    };
    let strtab = match (d.value(DT_STRTAB), d.value(DT_STRSZ)) {
        (Some(vaddr), Some(len)) => {
            let off = vaddr_to_offset(&phdrs, vaddr, len).unwrap_or(vaddr);
            read_range(src, off, len, "dynamic string table").unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let text = |off: u64| str_at(&strtab, off).map(|s| String::from_utf8_lossy(s).into_owned());
    let mut facts = DynamicFacts::default();
    for e in &d.entries {
        match e.tag {
            DT_SONAME => facts.soname = if e.val == 0 { None } else { text(e.val) },
            DT_NEEDED => facts.needed.extend(text(e.val)),
            DT_RPATH => facts
                .rpath
                .extend(text(e.val).iter().flat_map(|v| split(v))),
            DT_RUNPATH => facts
                .runpath
                .extend(text(e.val).iter().flat_map(|v| split(v))),
            _ => {}
        }
    }
    Ok(facts)
}

fn split(list: &str) -> Vec<String> {
    list.split(':').map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lists_keep_empty_entries() {
        assert_eq!(
            split("$ORIGIN::/opt/rocm/lib"),
            ["$ORIGIN", "", "/opt/rocm/lib"]
        );
    }

    /// The machine's libc, read through a file and through bytes, agrees
    /// with goblin's whole-file parse.
    #[test]
    fn agrees_with_goblin_on_a_system_library() {
        let path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        let data = std::fs::read(path).expect("run inside scripts/buildroot");
        let g = goblin::elf::Elf::parse(&data).unwrap();
        let file = FileSource::new(std::fs::File::open(path).unwrap()).unwrap();
        for facts in [
            dynamic_facts(&file).unwrap(),
            dynamic_facts(&data[..]).unwrap(),
        ] {
            assert_eq!(facts.soname.as_deref(), g.soname);
            assert_eq!(facts.needed, g.libraries);
        }
        let elf = Elf::open(&data[..]).unwrap();
        let shdrs = elf.section_headers().unwrap();
        assert_eq!(shdrs.len(), g.section_headers.len());
        let text = elf.section(&shdrs, ".text").unwrap().unwrap();
        assert_eq!(g.shdr_strtab.get_at(text.sh_name), Some(".text"));
        assert_eq!(elf.section_range(".no_such").unwrap(), None);
        assert_eq!(Arch::of_header(&elf.header), Some(Arch::X86_64));
    }

    /// The whole-file parse of the machine's libc: inside its bounds,
    /// with version needs and defined and undefined dynamic symbols; cut
    /// short, it is invalid.
    #[test]
    fn parsed_system_library() {
        let data = std::fs::read("/usr/lib/x86_64-linux-gnu/libc.so.6").unwrap();
        let elf = Parsed::parse(&data).unwrap();
        // glibc's libc.so.6 runs (it prints its version): ET_DYN with an
        // interpreter.
        assert_eq!(elf.kind(), ElfKind::Executable);
        assert!(elf.is_64() && elf.is_little_endian());
        elf.check_bounds().unwrap();
        let needs = elf.version_needs().unwrap();
        assert!(
            needs
                .get("ld-linux-x86-64.so.2")
                .is_some_and(|v| !v.is_empty()),
            "{needs:?}"
        );
        let syms: Vec<Symbol> = elf.dynamic_symbols().collect();
        assert!(syms.iter().any(|s| s.defined && s.name == "malloc"));
        assert!(syms.iter().any(|s| !s.defined));
        assert!(syms.iter().all(|s| !s.name.is_empty()));

        let cut = &data[..data.len() - 1];
        let e = Parsed::parse(cut)
            .and_then(|p| p.check_bounds())
            .unwrap_err();
        assert!(matches!(e, Error::Invalid(_)), "{e}");
    }

    #[test]
    fn machine_names() {
        use names::machine_name;
        assert_eq!(machine_name(raw::EM_X86_64, true), "x86_64");
        assert_eq!(machine_name(raw::EM_AARCH64, false), "aarch64_be");
        assert_eq!(machine_name(EM_AMDGPU, true), "amdgpu");
        assert_eq!(machine_name(9999, true), "e_machine=9999");
        assert_eq!(names::et_to_str(raw::ET_DYN), "DYN");
    }

    /// Only 64-bit little-endian host code has an [`Arch`].
    #[test]
    fn arch_of_a_header() {
        use raw::{EI_CLASS, EI_DATA, ELFCLASS32, ELFDATA2MSB, EM_AARCH64, EM_PPC64};
        let data = std::fs::read("/usr/lib/x86_64-linux-gnu/libc.so.6").unwrap();
        let mut h = Elf::open(&data[..]).unwrap().header;
        h.e_machine = EM_AARCH64;
        assert_eq!(Arch::of_header(&h), Some(Arch::Aarch64));
        for (i, v) in [(EI_CLASS, ELFCLASS32), (EI_DATA, ELFDATA2MSB)] {
            let mut other = h;
            other.e_ident[i] = v;
            assert_eq!(Arch::of_header(&other), None);
        }
        h.e_machine = EM_PPC64;
        assert_eq!(Arch::of_header(&h), None);
        h.e_machine = EM_AMDGPU;
        assert_eq!(Arch::of_header(&h), None);
        assert_eq!(Arch::from_name("aarch64"), Some(Arch::Aarch64));
        assert_eq!(Arch::from_name("ppc64le"), None);
        assert_eq!(Arch::X86_64.to_string(), "x86_64");
    }
}
