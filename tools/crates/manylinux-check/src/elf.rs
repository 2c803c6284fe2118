//! The facts the checker needs from one ELF file, read with goblin.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Result};
use elf_read::{Arch, DynamicFacts, EM_AMDGPU};
use goblin::elf::{header, program_header, section_header, sym, Elf};
use serde::Serialize;

/// `\x7fELF`
pub const MAGIC: [u8; 4] = *b"\x7fELF";

const NT_GNU_PROPERTY_TYPE_0: u32 = 5;
const GNU_PROPERTY_X86_ISA_1_NEEDED: u32 = 0xc000_8002;

pub use elf_read::ElfKind;

/// What one ELF file needs at run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ElfFacts {
    pub kind: ElfKind,
    /// Machine name (`x86_64`, `aarch64`, `amdgpu`, `e_machine=N`).
    pub machine: String,
    /// The CPU of its host code, if one the checker knows (64-bit little
    /// endian x86_64 or aarch64); `None` for device code and other CPUs.
    #[serde(skip)]
    pub arch: Option<Arch>,
    /// AMDGPU device code object (a HIP kernel blob stored as a file).
    #[serde(skip)]
    pub is_device_code: bool,
    pub soname: Option<String>,
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
    /// Library (verneed file name) -> version requirements, e.g.
    /// `libc.so.6` -> {`GLIBC_2.2.5`, `GLIBC_2.17`}.
    pub version_requirements: BTreeMap<String, BTreeSet<String>>,
    /// Undefined, non-weak dynamic symbols (for forbidden-symbol checks).
    #[serde(skip)]
    pub undefined_symbols: BTreeSet<String>,
    /// x86-64 micro-architecture level the ELF declares it needs (`x86_64_v3`),
    /// from the GNU property note.
    pub isa_needed: Option<String>,
    /// Imports `PyFPE_jbuf` & co. (a Python built with --with-fpectl).
    #[serde(skip)]
    pub uses_pyfpe: bool,
}

/// Check that every header and section the loader would read lies inside
/// the file, so a truncated file is reported instead of half-read.
fn check_bounds(elf: &Elf, len: usize) -> Result<()> {
    let len = len as u64;
    for (i, ph) in elf.program_headers.iter().enumerate() {
        let end = ph.p_offset.checked_add(ph.p_filesz);
        if !matches!(end, Some(e) if e <= len) {
            bail!(
                "program header {i} ({}) covers bytes {}..{} but the file has {len} bytes",
                program_header::pt_to_str(ph.p_type),
                ph.p_offset,
                ph.p_offset.saturating_add(ph.p_filesz)
            );
        }
    }
    for (i, sh) in elf.section_headers.iter().enumerate() {
        if sh.sh_type == section_header::SHT_NOBITS || sh.sh_type == section_header::SHT_NULL {
            continue;
        }
        let end = sh.sh_offset.checked_add(sh.sh_size);
        if !matches!(end, Some(e) if e <= len) {
            let name = elf.shdr_strtab.get_at(sh.sh_name).unwrap_or("?");
            bail!(
                "section {i} ({name}) covers bytes {}..{} but the file has {len} bytes",
                sh.sh_offset,
                sh.sh_offset.saturating_add(sh.sh_size)
            );
        }
    }
    Ok(())
}

fn machine_name(m: u16, little_endian: bool) -> String {
    match m {
        header::EM_X86_64 => "x86_64".into(),
        header::EM_386 => "i686".into(),
        header::EM_AARCH64 if little_endian => "aarch64".into(),
        header::EM_AARCH64 => "aarch64_be".into(),
        header::EM_PPC64 => "ppc64".into(),
        header::EM_S390 => "s390x".into(),
        header::EM_ARM => "armv7l".into(),
        header::EM_RISCV => "riscv64".into(),
        EM_AMDGPU => "amdgpu".into(),
        other => format!("e_machine={other}"),
    }
}

/// The x86-64 ISA level from a GNU_PROPERTY_X86_ISA_1_NEEDED bitmask
/// (bit 0 baseline, 1 v2, 2 v3, 3 v4).
fn isa_level(bits: u32) -> Option<String> {
    let level = if bits & 8 != 0 {
        4
    } else if bits & 4 != 0 {
        3
    } else if bits & 2 != 0 {
        2
    } else {
        return None;
    };
    Some(format!("x86_64_v{level}"))
}

fn read_u32(b: &[u8], off: usize, le: bool) -> Option<u32> {
    let a: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(if le {
        u32::from_le_bytes(a)
    } else {
        u32::from_be_bytes(a)
    })
}

/// Walk the SHT_NOTE sections by hand (bounds-checked; stops at the first
/// malformed entry) looking for the x86 ISA property.
fn read_isa_needed(elf: &Elf, bytes: &[u8]) -> Option<String> {
    let le = elf.little_endian;
    for sh in elf
        .section_headers
        .iter()
        .filter(|s| s.sh_type == section_header::SHT_NOTE)
    {
        let start = sh.sh_offset as usize;
        let data = bytes.get(start..start.checked_add(sh.sh_size as usize)?)?;
        let align = if sh.sh_addralign == 8 { 8 } else { 4 };
        let pad = |n: usize| n.div_ceil(align) * align;
        let mut off = 0usize;
        while off + 12 <= data.len() {
            let namesz = read_u32(data, off, le)? as usize;
            let descsz = read_u32(data, off + 4, le)? as usize;
            let n_type = read_u32(data, off + 8, le)?;
            let name_off = off + 12;
            let desc_off = pad(name_off.checked_add(namesz)?);
            let desc = data.get(desc_off..desc_off.checked_add(descsz)?)?;
            let name = data.get(name_off..name_off + namesz)?;
            if n_type == NT_GNU_PROPERTY_TYPE_0 && name == b"GNU\0" {
                // Properties: u32 type, u32 size, data padded to the word size.
                let word = if elf.is_64 { 8 } else { 4 };
                let mut p = 0usize;
                while p + 8 <= desc.len() {
                    let pr_type = read_u32(desc, p, le)?;
                    let pr_size = read_u32(desc, p + 4, le)? as usize;
                    if pr_type == GNU_PROPERTY_X86_ISA_1_NEEDED && pr_size == 4 {
                        return isa_level(read_u32(desc, p + 8, le)?);
                    }
                    p = p + 8 + pr_size.div_ceil(word) * word;
                }
            }
            off = pad(desc_off + descsz);
        }
    }
    None
}

/// Parse an ELF image. Errors mean the file is truncated or corrupt.
pub fn read_elf(bytes: &[u8]) -> Result<ElfFacts> {
    let elf = Elf::parse(bytes).map_err(|e| anyhow::anyhow!("{e}"))?;
    check_bounds(&elf, bytes.len())?;

    let kind = ElfKind::of(elf.header.e_type, elf.interpreter.is_some());
    let m = elf.header.e_machine;
    let arch = Arch::of_header(&elf.header);

    let mut version_requirements: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    if let Some(verneed) = &elf.verneed {
        for need in verneed.iter() {
            let Some(file) = elf.dynstrtab.get_at(need.vn_file) else {
                bail!(".gnu.version_r names a library outside .dynstr");
            };
            let entry = version_requirements.entry(file.to_string()).or_default();
            for aux in need.iter() {
                let Some(name) = elf.dynstrtab.get_at(aux.vna_name) else {
                    bail!(".gnu.version_r names a version outside .dynstr");
                };
                entry.insert(name.to_string());
            }
        }
    }

    let mut undefined_symbols = BTreeSet::new();
    let mut uses_pyfpe = false;
    for s in elf.dynsyms.iter() {
        if s.st_shndx != section_header::SHN_UNDEF as usize || s.st_name == 0 {
            continue;
        }
        let Some(name) = elf.dynstrtab.get_at(s.st_name) else {
            continue;
        };
        if matches!(name, "PyFPE_jbuf" | "PyFPE_dummy" | "PyFPE_counter")
            && matches!(s.st_type(), sym::STT_FUNC | sym::STT_NOTYPE)
        {
            uses_pyfpe = true;
        }
        if s.st_bind() != sym::STB_WEAK {
            undefined_symbols.insert(name.to_string());
        }
    }

    let DynamicFacts {
        soname,
        needed,
        rpath,
        runpath,
    } = elf_read::dynamic_facts(bytes)?;
    Ok(ElfFacts {
        kind,
        machine: machine_name(m, elf.little_endian),
        arch,
        is_device_code: m == EM_AMDGPU,
        soname,
        needed,
        rpath,
        runpath,
        version_requirements,
        undefined_symbols,
        // The level note is x86-64's; other CPUs' notes mean other things.
        isa_needed: if arch == Some(Arch::X86_64) {
            read_isa_needed(&elf, bytes)
        } else {
            None
        },
        uses_pyfpe,
    })
}

/// The dynamic loader itself is never a dependency to bundle or whitelist.
pub fn is_dynamic_loader(soname: &str) -> bool {
    soname.starts_with("ld-linux") || soname == "ld64.so.1" || soname == "ld64.so.2"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use wheel_read::{elf_image, ImageOptions, Reopen, HEAD_CAP};

    /// Reads a member of `size` bytes keeping only what the checker parses,
    /// with at most `head_cap` bytes of the file start.
    fn sparse_image(reopen: &mut Reopen, size: u64, head_cap: u64) -> Result<Vec<u8>> {
        let opts = ImageOptions {
            whole_max: 0,
            head_cap,
            ..ImageOptions::default()
        };
        elf_image(reopen, size, &opts)
    }

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
