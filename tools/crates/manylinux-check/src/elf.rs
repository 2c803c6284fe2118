//! The facts the checker needs from one ELF file, read with elf-read.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use elf_read::raw::{STB_WEAK, STT_FUNC, STT_NOTYPE};
use elf_read::{Arch, DynamicFacts, Parsed, EM_AMDGPU};
use serde::Serialize;

/// `\x7fELF`
pub const MAGIC: [u8; 4] = *elf_read::raw::ELFMAG;

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

/// Parse an ELF image. Errors mean the file is truncated or corrupt.
pub fn read_elf(bytes: &[u8]) -> Result<ElfFacts> {
    let elf = Parsed::parse(bytes)?;
    elf.check_bounds()?;

    let kind = elf.kind();
    let m = elf.header().e_machine;
    let arch = Arch::of_header(elf.header());
    let version_requirements = elf.version_needs()?;

    let mut undefined_symbols = BTreeSet::new();
    let mut uses_pyfpe = false;
    for s in elf.dynamic_symbols().filter(|s| !s.defined) {
        if matches!(s.name, "PyFPE_jbuf" | "PyFPE_dummy" | "PyFPE_counter")
            && matches!(s.kind, STT_FUNC | STT_NOTYPE)
        {
            uses_pyfpe = true;
        }
        if s.bind != STB_WEAK {
            undefined_symbols.insert(s.name.to_string());
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
        machine: elf_read::names::machine_name(m, elf.is_little_endian()),
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
            elf.x86_isa_needed()
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
