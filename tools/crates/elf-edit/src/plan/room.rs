//! Room for one more program header: a PT_NULL entry, free bytes after
//! the table, or the sections right after it moved out of the way.

use super::*;

/// Where the program header table finds room for one more PT_LOAD, and the
/// program headers without the PT_NULL entry given up for it (if any).
pub(super) fn table_room(p: &Parsed) -> Result<(Room, Vec<ProgramHeader>)> {
    let room = phdr_room(p)?;
    let mut phdrs = p.phdrs.clone();
    if let Room::NullSlot(i) = room {
        phdrs.remove(i);
    }
    if phdrs.len() + 1 >= 0xffff {
        return Err(EditError::CannotPlace(
            "the program header table is full (65535 entries)".into(),
        ));
    }
    Ok((room, phdrs))
}

/// Sections relocated as one block to make room after the program header
/// table: (indices, file range, old vaddr of the start, max alignment).
pub(super) struct Block {
    pub(super) sections: Vec<usize>,
    pub(super) off: u64,
    pub(super) end_off: u64,
    pub(super) vaddr: u64,
    pub(super) align: u64,
}

pub(super) enum Room {
    /// A PT_NULL entry is given up for the new PT_LOAD.
    NullSlot(usize),
    /// Unused bytes follow the table inside its segment.
    Gap,
    /// The sections right after the table move to the new segment (what
    /// patchelf does); the table stays where binutils expect it.
    MoveBlock(Block),
    /// The table itself moves to the new segment (no section headers, or
    /// what follows the table cannot move).
    MoveTable,
}

/// Section types that nothing but dynamic tags and program headers point
/// to, so they can move (code may address .rodata and the like directly).
/// `.interp` is PROGBITS but is recognised by PT_INTERP covering it.
pub(super) fn movable(p: &Parsed, sh: &SectionHeader) -> bool {
    use elf_read::raw::*;
    let interp = sh.sh_type == SHT_PROGBITS
        && p.phdrs.iter().any(|ph| {
            ph.p_type == PT_INTERP && ph.p_offset == sh.sh_offset && ph.p_filesz == sh.sh_size
        });
    interp
        || matches!(
            sh.sh_type,
            SHT_NOTE
                | SHT_GNU_HASH
                | SHT_HASH
                | SHT_DYNSYM
                | SHT_GNU_VERSYM
                | SHT_GNU_VERDEF
                | SHT_GNU_VERNEED
                | SHT_RELA
                | SHT_REL
        )
}

pub(super) fn phdr_room(p: &Parsed) -> Result<Room> {
    if let Some(i) = p.phdrs.iter().position(|ph| ph.p_type == PT_NULL) {
        return Ok(Room::NullSlot(i));
    }
    Ok(room_after_table(p).unwrap_or(Room::MoveTable))
}

/// Room for one more entry right after the table, inside its PT_LOAD: a
/// free gap, or sections that can move out. None: the table must move.
pub(super) fn room_after_table(p: &Parsed) -> Option<Room> {
    let table_end = p.header.e_phoff + p.phdrs.len() as u64 * PHDR_SIZE;
    let need = table_end + PHDR_SIZE;
    if p.shdrs.is_empty() || !p.sane_sections() {
        return None;
    }
    let load = p.phdrs.iter().find(|ph| {
        ph.p_type == PT_LOAD
            && ph.p_offset <= p.header.e_phoff
            && table_end <= ph.p_offset.saturating_add(ph.p_filesz)
    })?;
    let load_end = load.p_offset.saturating_add(load.p_filesz);
    if need > load_end {
        return None; // the longer table would not be loaded
    }
    let delta = load.p_vaddr.wrapping_sub(load.p_offset);
    let block = sections_in_the_way(p, (table_end, need), load_end, delta)?;
    if block.is_empty() {
        // Free only if no segment without a section uses those bytes.
        let used = p.phdrs.iter().any(|ph| {
            ph.p_type != PT_LOAD
                && ph.p_type != PT_PHDR
                && ph.p_filesz > 0
                && ph.p_offset < need
                && ph.p_offset.saturating_add(ph.p_filesz) > table_end
        });
        return (!used).then_some(Room::Gap);
    }
    movable_block(p, block, delta).map(Room::MoveBlock)
}

/// The sections (in file order) that must move for the table to grow from
/// `table_end` to `need`; None if one of them cannot move.
pub(super) fn sections_in_the_way(
    p: &Parsed,
    (table_end, need): (u64, u64),
    load_end: u64,
    delta: u64,
) -> Option<Vec<usize>> {
    // File-backed sections from the end of the table on, in file order.
    let mut after: Vec<usize> = (1..p.shdrs.len())
        .filter(|&i| {
            let s = &p.shdrs[i];
            s.sh_type != SHT_NOBITS && s.sh_size > 0 && s.sh_offset + s.sh_size > p.header.e_phoff
        })
        .collect();
    after.sort_by_key(|&i| p.shdrs[i].sh_offset);
    if after.iter().any(|&i| p.shdrs[i].sh_offset < table_end) {
        return None; // something overlaps the table
    }
    let mut block = Vec::new();
    // Move what starts before `until`; a segment (PT_NOTE, PT_INTERP...)
    // reaching past a moved section pulls in the rest of its sections.
    let mut until = need;
    for &i in &after {
        let s = &p.shdrs[i];
        if s.sh_offset >= until {
            break;
        }
        let end = s.sh_offset + s.sh_size;
        for ph in &p.phdrs {
            if ph.p_type != PT_LOAD
                && ph.p_offset < end
                && ph.p_offset.saturating_add(ph.p_filesz) > end
            {
                until = until.max(ph.p_offset.saturating_add(ph.p_filesz));
            }
        }
        let sa = s.sh_addr;
        if !movable(p, s)
            || Some(i) == p.dynstr_sh
            || Some(i) == p.dynamic_sh
            || s.sh_offset + s.sh_size > load_end
            || sa.wrapping_sub(s.sh_offset) != delta
            || s.sh_flags & u64::from(SHF_ALLOC) == 0
        {
            return None;
        }
        block.push(i);
    }
    Some(block)
}

/// The sections `block` as one [`Block`], if it can move whole: alignment
/// at most a page, no other segment or section straddling it.
pub(super) fn movable_block(p: &Parsed, block: Vec<usize>, delta: u64) -> Option<Block> {
    let off = p.shdrs[block[0]].sh_offset;
    let end_off = block
        .iter()
        .map(|&i| p.shdrs[i].sh_offset + p.shdrs[i].sh_size)
        .max()
        .unwrap();
    let vaddr = off.wrapping_add(delta);
    let align = block
        .iter()
        .map(|&i| p.shdrs[i].sh_addralign.max(1))
        .max()
        .unwrap();
    if !align.is_power_of_two() || align > PAGE {
        return None;
    }
    // Segments other than PT_LOAD must lie wholly inside or outside it.
    let end_v = vaddr.saturating_add(end_off - off);
    for ph in &p.phdrs {
        if ph.p_type == PT_LOAD || ph.p_type == PT_PHDR || ph.p_memsz == 0 {
            continue;
        }
        let (a, b) = (ph.p_vaddr, ph.p_vaddr.saturating_add(ph.p_memsz));
        let inside = a >= vaddr && b <= end_v;
        let outside = b <= vaddr || a >= end_v;
        if !inside && !outside {
            return None;
        }
    }
    // Any other section overlapping the block would be left behind.
    for i in 1..p.shdrs.len() {
        let s = &p.shdrs[i];
        if !block.contains(&i)
            && s.sh_size > 0
            && s.sh_type != SHT_NOBITS
            && s.sh_offset < end_off
            && s.sh_offset + s.sh_size > off
        {
            return None;
        }
    }
    Some(Block {
        sections: block,
        off,
        end_off,
        vaddr,
        align,
    })
}
