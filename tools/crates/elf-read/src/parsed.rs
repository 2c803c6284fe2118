//! The whole-file parse of an ELF file held in memory: every table goblin
//! knows decoded at once. It is the validity check of the tools (a file
//! whose symbol, string, version or dynamic tables do not parse is corrupt)
//! and the source of symbols, version needs and notes; reading headers
//! and sections of a large file is [`crate::Elf`]'s job.

use crate::{ElfKind, Error, Header, ProgramHeader, Result, SectionHeader};

/// An ELF file parsed whole.
pub struct Parsed<'a> {
    pub(crate) elf: goblin::elf::Elf<'a>,
    pub(crate) bytes: &'a [u8],
}

impl<'a> Parsed<'a> {
    /// Parses `bytes`; [`Error::Invalid`] with goblin's message when a
    /// table does not parse.
    pub fn parse(bytes: &'a [u8]) -> Result<Parsed<'a>> {
        let elf = goblin::elf::Elf::parse(bytes).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Parsed { elf, bytes })
    }

    pub fn header(&self) -> &Header {
        &self.elf.header
    }

    /// Shared object, executable (`ET_DYN` with an interpreter too), ...
    pub fn kind(&self) -> ElfKind {
        ElfKind::of(self.elf.header.e_type, self.elf.interpreter.is_some())
    }

    pub fn is_64(&self) -> bool {
        self.elf.is_64
    }

    pub fn is_little_endian(&self) -> bool {
        self.elf.little_endian
    }

    pub fn program_headers(&self) -> &[ProgramHeader] {
        &self.elf.program_headers
    }

    pub fn section_headers(&self) -> &[SectionHeader] {
        &self.elf.section_headers
    }

    /// The name of section header `sh` in the section name table.
    pub fn section_name(&self, sh: &SectionHeader) -> Option<&'a str> {
        self.elf.shdr_strtab.get_at(sh.sh_name)
    }
}
