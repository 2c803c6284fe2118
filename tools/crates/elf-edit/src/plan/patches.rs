//! Byte patches: program headers, the dynamic array, section headers
//! (kept sorted, indices remapped) and the symbols that name moved sections.

use super::*;

pub(super) fn ph_bytes(p: &ProgramHeader) -> [u8; PHDR_SIZE as usize] {
    let mut b = [0u8; PHDR_SIZE as usize];
    b[0..4].copy_from_slice(&p.p_type.to_le_bytes());
    b[4..8].copy_from_slice(&p.p_flags.to_le_bytes());
    for (i, v) in [
        p.p_offset, p.p_vaddr, p.p_paddr, p.p_filesz, p.p_memsz, p.p_align,
    ]
    .iter()
    .enumerate()
    {
        b[8 + i * 8..16 + i * 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

pub(super) fn dyn_bytes(dyns: &[Dyn], slots: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity((slots * DYN_SIZE) as usize);
    for d in dyns {
        out.extend_from_slice(&d.tag.to_le_bytes());
        out.extend_from_slice(&d.val.to_le_bytes());
    }
    out.resize((slots * DYN_SIZE) as usize, 0);
    out
}

/// Rewrites the section header table when anything in it changed, sorted
/// by file offset like a linker's output (moved sections go last among the
/// loaded ones), and fixes every index into it: sh_link, sh_info where it
/// names a section, e_shstrndx and st_shndx in the symbol tables. Symbols
/// in moved sections are shifted with them.
pub(super) fn section_patches<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    mut shdrs: Vec<SectionHeader>,
    shift: Option<(Vec<usize>, u64)>,
) -> Result<Vec<(u64, Vec<u8>)>> {
    use elf_read::raw::*;
    let n = shdrs.len();
    if n == 0 || shdrs == p.shdrs {
        return Ok(Vec::new());
    }
    let order = section_order(p, &shdrs);
    let mut new_index = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new as u32;
    }
    let remap = |i: u32| {
        if (i as usize) < n {
            new_index[i as usize]
        } else {
            i
        }
    };
    let mut patches = symbol_patches(src, p, &shdrs, &remap, shift.as_ref())?;
    for s in shdrs.iter_mut() {
        s.sh_link = remap(s.sh_link);
        if s.sh_flags & u64::from(SHF_INFO_LINK) != 0
            || s.sh_type == SHT_REL
            || s.sh_type == SHT_RELA
        {
            s.sh_info = remap(s.sh_info);
        }
    }
    let mut table = Vec::with_capacity(n * SHDR_SIZE as usize);
    for &old in &order {
        let s = &shdrs[old];
        table.extend_from_slice(&(s.sh_name as u32).to_le_bytes());
        table.extend_from_slice(&s.sh_type.to_le_bytes());
        for v in [s.sh_flags, s.sh_addr, s.sh_offset, s.sh_size] {
            table.extend_from_slice(&v.to_le_bytes());
        }
        table.extend_from_slice(&s.sh_link.to_le_bytes());
        table.extend_from_slice(&s.sh_info.to_le_bytes());
        table.extend_from_slice(&s.sh_addralign.to_le_bytes());
        table.extend_from_slice(&s.sh_entsize.to_le_bytes());
    }
    patches.push((p.header.e_shoff, table));
    let shstrndx = remap(u32::from(p.header.e_shstrndx)) as u16;
    patches.push((62, shstrndx.to_le_bytes().to_vec()));
    Ok(patches)
}

/// Old section indices in their new order: loaded sections by file offset,
/// then the others (offset order); files with section groups or extended
/// symbol indices, or with inconsistent section headers, keep their order.
pub(super) fn section_order(p: &Parsed, shdrs: &[SectionHeader]) -> Vec<usize> {
    use elf_read::raw::*;
    let n = shdrs.len();
    let extended = shdrs
        .iter()
        .any(|s| s.sh_type == SHT_SYMTAB_SHNDX || s.sh_type == SHT_GROUP);
    if extended || !p.sane_sections() {
        return (0..n).collect();
    }
    let mut order: Vec<usize> = (1..n).collect();
    order.sort_by_key(|&i| {
        (
            shdrs[i].sh_flags & u64::from(SHF_ALLOC) == 0,
            shdrs[i].sh_offset,
            i,
        )
    });
    order.insert(0, 0);
    order
}

/// The symbol tables that change: st_shndx remapped, st_value of symbols
/// in moved sections shifted (`shift`: moved sections, vaddr shift).
pub(super) fn symbol_patches<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    shdrs: &[SectionHeader],
    remap: &dyn Fn(u32) -> u32,
    shift: Option<&(Vec<usize>, u64)>,
) -> Result<Vec<(u64, Vec<u8>)>> {
    use elf_read::raw::*;
    let mut patches = Vec::new();
    for (i, s) in shdrs.iter().enumerate() {
        if s.sh_type != SHT_SYMTAB && s.sh_type != SHT_DYNSYM {
            continue;
        }
        // Read from the input; a moved table is written at its new place.
        let old_off = p.shdrs[i].sh_offset;
        let mut syms = read_range(src, old_off, s.sh_size - s.sh_size % 24, "symbol table")?;
        let mut changed = false;
        for sym in syms.chunks_exact_mut(24) {
            let shndx = u16::from_le_bytes([sym[6], sym[7]]);
            if shndx == 0 || shndx >= 0xff00 {
                continue;
            }
            if let Some((moved, dv)) = shift {
                if moved.contains(&(shndx as usize)) {
                    let val = u64::from_le_bytes(sym[8..16].try_into().unwrap());
                    sym[8..16].copy_from_slice(&val.wrapping_add(*dv).to_le_bytes());
                    changed = true;
                }
            }
            let new = remap(u32::from(shndx)) as u16;
            if new != shndx {
                sym[6..8].copy_from_slice(&new.to_le_bytes());
                changed = true;
            }
        }
        if changed {
            patches.push((s.sh_offset, syms));
        }
    }
    Ok(patches)
}
