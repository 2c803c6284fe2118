//! The kpack references of a linked host binary: each `HIPK` wrapper in
//! `.hipFatBinSegment`, its code object index, and the marker its relocated
//! pointer leads to.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use elf_read::raw::SHT_RELA;
use elf_read::{read_range, vaddr_to_offset, Elf, ReadAt};

use crate::marker::{Marker, HIPF_MAGIC, HIPK_MAGIC, MAX_MARKER_SIZE, WRAPPER_SIZE};

const R_X86_64_RELATIVE: u64 = 8;
/// RELA entries scanned per read (24 bytes each).
const RELA_CHUNK: u64 = 24 * 43_690;

/// One `HIPK` wrapper of a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperRef {
    /// Position in `.hipFatBinSegment`.
    pub index: usize,
    /// `reserved1`: the `#<index>` of the archive key.
    pub co_index: u32,
    /// Shared by the wrappers pointing at the same marker (decoded once).
    pub marker: Arc<Marker>,
}

impl WrapperRef {
    /// The archive key the loader looks up.
    pub fn key(&self) -> String {
        format!("{}#{}", self.marker.kernel_name, self.co_index)
    }
}

/// Reads the `HIPK` wrappers of an x86-64 ELF binary, in order (`src`: the
/// file, or an image holding at least its headers, `.hipFatBinSegment`, the
/// RELA sections and `.rocm_kpack_ref`). `HIPF` wrappers (device code in the
/// binary) are skipped; a binary without `.hipFatBinSegment` has none.
pub fn host_refs<S: ReadAt + ?Sized>(src: &S) -> Result<Vec<WrapperRef>> {
    let elf = Elf::open(src)?;
    let shdrs = elf.section_headers()?;
    let Some(seg) = elf.section(&shdrs, ".hipFatBinSegment")? else {
        return Ok(Vec::new());
    };
    let bytes = read_range(src, seg.sh_offset, seg.sh_size, ".hipFatBinSegment")?;
    if bytes.len() % WRAPPER_SIZE != 0 {
        bail!(
            ".hipFatBinSegment is {} bytes, not a whole number of {WRAPPER_SIZE}-byte wrappers",
            bytes.len()
        );
    }
    // Every wrapper's address is then below the end: no sum overflows.
    if seg.sh_addr.checked_add(seg.sh_size).is_none() {
        bail!(
            ".hipFatBinSegment at address {:#x} of {} bytes runs past the end of the address space",
            seg.sh_addr,
            seg.sh_size
        );
    }
    let mut refs = Vec::new();
    let mut wanted = Vec::new();
    for (i, w) in bytes.chunks(WRAPPER_SIZE).enumerate() {
        let magic = u32::from_le_bytes(w[..4].try_into().unwrap());
        match magic {
            HIPF_MAGIC => {}
            HIPK_MAGIC => wanted.push((
                i,
                u32::from_le_bytes(w[16..20].try_into().unwrap()),
                u64::from_le_bytes(w[8..16].try_into().unwrap()),
            )),
            other => bail!(
                "wrapper {i} in .hipFatBinSegment has magic {other:#x}, neither HIPF nor HIPK"
            ),
        }
    }
    if wanted.is_empty() {
        return Ok(refs);
    }
    // The pointer is relocated (R_X86_64_RELATIVE); RELR or a non-PIE
    // binary keeps it in place.
    let addends = relative_addends(
        src,
        &shdrs,
        &wanted
            .iter()
            .map(|&(i, _, _)| seg.sh_addr + (i * WRAPPER_SIZE) as u64 + 8)
            .collect::<Vec<_>>(),
    )?;
    let phdrs = elf.program_headers()?;
    resolve_markers(src, &phdrs, seg.sh_addr, wanted, &addends, &mut refs)?;
    Ok(refs)
}

/// Each wanted wrapper (index, code object index, pointer in place) with
/// its marker, through its relocation (`addends`) or the pointer in place;
/// each distinct marker read and decoded once.
fn resolve_markers<S: ReadAt + ?Sized>(
    src: &S,
    phdrs: &[elf_read::ProgramHeader],
    seg_addr: u64,
    wanted: Vec<(usize, u32, u64)>,
    addends: &HashMap<u64, u64>,
    refs: &mut Vec<WrapperRef>,
) -> Result<()> {
    // Wrappers of one translation unit share a marker: each distinct one
    // is read and decoded once.
    let mut markers: HashMap<u64, Arc<Marker>> = HashMap::new();
    for (i, co_index, in_place) in wanted {
        let at = seg_addr + (i * WRAPPER_SIZE) as u64 + 8;
        let ptr = addends.get(&at).copied().unwrap_or(in_place);
        if ptr == 0 {
            bail!("HIPK wrapper {i}: its marker pointer is neither relocated nor set");
        }
        let marker = match markers.get(&ptr) {
            Some(m) => Arc::clone(m),
            None => {
                let off = vaddr_to_offset(phdrs, ptr, 1).with_context(|| {
                    format!(
                        "HIPK wrapper {i}: marker address {ptr:#x} is in no loaded segment's file bytes"
                    )
                })?;
                let len = src
                    .size()
                    .checked_sub(off)
                    .with_context(|| {
                        format!("HIPK wrapper {i}: marker offset {off} is past the end of the file")
                    })?
                    .min(MAX_MARKER_SIZE as u64);
                let window = read_range(src, off, len, "kpack marker")?;
                let (marker, _) =
                    Marker::parse(&window).with_context(|| format!("HIPK wrapper {i}"))?;
                let m = Arc::new(marker);
                markers.insert(ptr, Arc::clone(&m));
                m
            }
        };
        refs.push(WrapperRef {
            index: i,
            co_index,
            marker,
        });
    }
    Ok(())
}

/// r_offset -> addend of the R_X86_64_RELATIVE entries at the `wanted`
/// addresses, reading the RELA sections in bounded chunks (time linear in
/// the relocations and wrappers).
fn relative_addends<S: ReadAt + ?Sized>(
    src: &S,
    shdrs: &[elf_read::SectionHeader],
    wanted: &[u64],
) -> Result<HashMap<u64, u64>> {
    let wanted: HashSet<u64> = wanted.iter().copied().collect();
    let mut found = HashMap::new();
    for s in shdrs.iter().filter(|s| s.sh_type == SHT_RELA) {
        let mut pos = 0;
        while pos < s.sh_size {
            let len = (s.sh_size - pos).min(RELA_CHUNK) / 24 * 24;
            if len == 0 {
                break;
            }
            let chunk = read_range(src, s.sh_offset + pos, len, "RELA relocations")?;
            for e in chunk.chunks(24) {
                let r_offset = u64::from_le_bytes(e[..8].try_into().unwrap());
                let r_info = u64::from_le_bytes(e[8..16].try_into().unwrap());
                if r_info & 0xffff_ffff == R_X86_64_RELATIVE && wanted.contains(&r_offset) {
                    // The loader applies them in order: the last wins.
                    found.insert(r_offset, u64::from_le_bytes(e[16..24].try_into().unwrap()));
                }
            }
            pos += len;
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three wrappers relocated to one marker in the first PT_LOAD.
    const HOST: &[u8] = include_bytes!("../fuzz/corpus/host/ok-three-wrappers.so");

    /// A PT_LOAD whose file bytes lie past the end of the file, holding
    /// the marker: a clear error, not a subtraction that overflows (a
    /// panic in a debug build, which these tests are).
    #[test]
    fn a_load_past_the_end_of_the_file_is_refused() {
        assert_eq!(host_refs(HOST).unwrap().len(), 3);
        let mut bad = HOST.to_vec();
        test_support::first_load_past_the_end(&mut bad);
        let e = format!("{:#}", host_refs(&bad[..]).unwrap_err());
        assert!(
            e.contains("HIPK wrapper 0: marker offset")
                && e.contains("is past the end of the file"),
            "{e}"
        );
    }
}
