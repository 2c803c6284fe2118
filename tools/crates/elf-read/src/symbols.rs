//! Symbols and symbol version needs of a [`Parsed`] file.

use std::collections::{BTreeMap, BTreeSet};

use crate::raw::SHN_UNDEF;
use crate::{Error, Parsed, Result};

/// A named symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a str,
    /// `st_type`: `STT_FUNC`, `STT_NOTYPE`, ...
    pub kind: u8,
    /// `st_bind`: `STB_GLOBAL`, `STB_WEAK`, ...
    pub bind: u8,
    /// Defined in a section of this file (not `SHN_UNDEF`).
    pub defined: bool,
}

impl<'a> Parsed<'a> {
    /// The symbols of `.symtab` that have a name in `.strtab`.
    pub fn symbols(&self) -> impl Iterator<Item = Symbol<'a>> + '_ {
        let names = &self.elf.strtab;
        self.elf.syms.iter().filter_map(move |s| symbol(&s, names))
    }

    /// The symbols of `.dynsym` that have a name in `.dynstr`.
    pub fn dynamic_symbols(&self) -> impl Iterator<Item = Symbol<'a>> + '_ {
        let names = &self.elf.dynstrtab;
        self.elf
            .dynsyms
            .iter()
            .filter_map(move |s| symbol(&s, names))
    }

    /// The versions `.gnu.version_r` needs, by library (its verneed file
    /// name): `libc.so.6` -> {`GLIBC_2.2.5`, `GLIBC_2.17`}.
    pub fn version_needs(&self) -> Result<BTreeMap<String, BTreeSet<String>>> {
        let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let Some(verneed) = &self.elf.verneed else {
            return Ok(needs);
        };
        let names = &self.elf.dynstrtab;
        for need in verneed.iter() {
            let Some(file) = names.get_at(need.vn_file) else {
                return Err(Error::Invalid(
                    ".gnu.version_r names a library outside .dynstr".into(),
                ));
            };
            let entry = needs.entry(file.to_string()).or_default();
            for aux in need.iter() {
                let Some(name) = names.get_at(aux.vna_name) else {
                    return Err(Error::Invalid(
                        ".gnu.version_r names a version outside .dynstr".into(),
                    ));
                };
                entry.insert(name.to_string());
            }
        }
        Ok(needs)
    }
}

/// `s` with its name, unless it has none (`st_name` 0 or outside `names`).
fn symbol<'a>(s: &goblin::elf::Sym, names: &goblin::strtab::Strtab<'a>) -> Option<Symbol<'a>> {
    if s.st_name == 0 {
        return None;
    }
    Some(Symbol {
        name: names.get_at(s.st_name)?,
        kind: s.st_type(),
        bind: s.st_bind(),
        defined: s.st_shndx != SHN_UNDEF as usize,
    })
}
