//! Growing the file: the appended PT_LOAD (moved sections or program
//! header table, dynamic array, grown .dynstr), where it goes, and what
//! points into it.

use super::*;

pub(super) const PAGE: u64 = 0x1000;

/// Never pad the file by more than this to line up the new segment's
/// vaddr-offset delta with the first segment's (see `place_segment`).
pub(super) const MAX_DELTA_PAD: u64 = 64 << 20;

/// Free DT_NULL slots left after a moved dynamic array, so later edits that
/// add an entry need not move it again.
pub(super) const SPARE_DYN_SLOTS: u64 = 3;

pub(super) fn round_up(v: u64, a: u64) -> Option<u64> {
    Some(v.checked_add(a - 1)? & !(a - 1))
}

/// Where the appended segment goes: file offset `O` page-aligned after the
/// end of file, vaddr `V` above every segment's memory image, with
/// `V ≡ O (mod p_align)` (patchelf #492/#528: the loader rejects anything
/// else). A large .bss thus costs address space, not file size.
///
/// One exception, `phdr_delta`: the program header table of a program (it
/// has PT_INTERP) moves into this segment. Kernels before 5.18 compute
/// AT_PHDR as load base + e_phoff, which is right only if `V - O` equals the
/// first PT_LOAD's delta; then, when that costs at most [`MAX_DELTA_PAD`]
/// bytes of padding, the segment is placed so.
pub(super) fn place_segment(p: &Parsed, align: u64, phdr_delta: bool) -> Result<(u64, u64)> {
    let overflow = || {
        EditError::CannotPlace("the new segment would lie beyond the 64-bit address space".into())
    };
    let loads = || p.phdrs.iter().filter(|ph| ph.p_type == PT_LOAD);
    let mut mem_end = 0u64;
    for ph in loads() {
        mem_end = mem_end.max(ph.p_vaddr.checked_add(ph.p_memsz).ok_or_else(overflow)?);
    }
    let v_min = round_up(mem_end, PAGE).ok_or_else(overflow)?;
    let o_min = round_up(p.file_len, PAGE).ok_or_else(overflow)?;
    let first = loads()
        .min_by_key(|ph| ph.p_vaddr)
        .expect("parse checked PT_LOAD exists");
    if let Some(delta) = first
        .p_vaddr
        .checked_sub(first.p_offset)
        .filter(|_| phdr_delta)
    {
        if delta % align == 0 {
            if let Some(o) = v_min
                .checked_sub(delta)
                .map(|lo| lo.max(o_min))
                .and_then(|o| round_up(o, PAGE))
            {
                if o - p.file_len <= MAX_DELTA_PAD {
                    if let Some(v) = o.checked_add(delta) {
                        return Ok((o, v));
                    }
                }
            }
        }
    }
    let r = o_min % align;
    let v = if v_min <= r {
        r
    } else {
        round_up(v_min - r, align)
            .ok_or_else(overflow)?
            .checked_add(r)
            .ok_or_else(overflow)?
    };
    Ok((o_min, v))
}

pub(super) fn plan_append<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    mut dyns: Vec<Dyn>,
    rpath: &[u8],
    kind: RpathKind,
) -> Result<Plan> {
    let (dynstr, str_off) = appended_dynstr(p, rpath);
    point_rpath_at(&mut dyns, str_off, kind);
    let strsz = dynstr.len() as u64;
    let align = load_align(p)?;
    let (room, mut phdrs) = table_room(p)?;
    let l = layout(p, room, phdrs.len() + 1, dyns.len(), strsz);

    let program = p.phdrs.iter().any(|ph| ph.p_type == PT_INTERP);
    let (o, v) = place_segment(p, align, l.moved_table() && program)?;
    let too_big = || {
        EditError::CannotPlace("the new segment would lie beyond the 64-bit address space".into())
    };
    o.checked_add(l.size).ok_or_else(too_big)?;
    v.checked_add(l.size).ok_or_else(too_big)?;

    let mut shdrs = p.shdrs.clone();
    let mut segment = vec![0u8; l.size as usize];
    // (moved sections, vaddr shift) of the moved block.
    let mut shift = None;
    if let Room::MoveBlock(b) = &l.room {
        let bytes = read_range(src, b.off, b.end_off - b.off, "moved sections")?;
        let at = l.block_rel as usize;
        segment[at..at + bytes.len()].copy_from_slice(&bytes);
        let dv = (v + l.block_rel).wrapping_sub(b.vaddr);
        let doff = (o + l.block_rel).wrapping_sub(b.off);
        shift_block(b, dv, doff, &mut shdrs, &mut phdrs, &mut dyns);
        shift = Some((b.sections.clone(), dv));
    }
    for d in dyns.iter_mut() {
        match d.tag {
            DT_STRTAB => d.val = v + l.dynstr_rel,
            DT_STRSZ => d.val = strsz,
            _ => {}
        }
    }
    add_load(p, &mut phdrs, &l, (o, v), align);
    let table: Vec<u8> = phdrs.iter().flat_map(ph_bytes).collect();

    let mut patches = Vec::new();
    if l.moved_table() {
        segment[..table.len()].copy_from_slice(&table);
        patches.push((32, o.to_le_bytes().to_vec())); // e_phoff
    } else {
        patches.push((p.header.e_phoff, table));
    }
    patches.push((56, (l.phnum as u16).to_le_bytes().to_vec())); // e_phnum
    if l.move_dynamic {
        let d = dyn_bytes(&dyns, l.new_slots);
        let at = l.dyn_rel as usize;
        segment[at..at + d.len()].copy_from_slice(&d);
    } else {
        patches.push((
            p.phdrs[p.dynamic_ph].p_offset,
            dyn_bytes(&dyns, p.dyn_slots),
        ));
    }
    segment[l.dynstr_rel as usize..].copy_from_slice(&dynstr);
    place_dyn_sections(p, &mut shdrs, &l, (o, v));
    patches.push((o, segment));
    // Section headers and symbol tables last: they may lie in the segment.
    patches.extend(section_patches(src, p, shdrs, shift)?);
    Ok(Plan {
        patches,
        new_len: o + l.size,
        method: Method::Appended {
            moved_dynamic: l.move_dynamic,
            moved_phdrs: l.moved_table(),
        },
    })
}

/// The new .dynstr: old contents + the new string, so every existing
/// offset (symbol names, NEEDED, version names) stays valid; and the new
/// string's offset.
pub(super) fn appended_dynstr(p: &Parsed, rpath: &[u8]) -> (Vec<u8>, u64) {
    let str_off = p.dynstr.len() as u64;
    let mut dynstr = p.dynstr.clone();
    dynstr.extend_from_slice(rpath);
    dynstr.push(0);
    (dynstr, str_off)
}

/// Points every rpath entry at `str_off`, adding one of `kind` if none.
pub(super) fn point_rpath_at(dyns: &mut Vec<Dyn>, str_off: u64, kind: RpathKind) {
    let is_rp = |d: &Dyn| d.tag == DT_RPATH || d.tag == DT_RUNPATH;
    let had_entry = dyns.iter().any(is_rp);
    dyns.iter_mut()
        .filter(|d| is_rp(d))
        .for_each(|d| d.val = str_off);
    if !had_entry {
        dyns.push(Dyn {
            tag: kind.tag(),
            val: str_off,
        });
    }
}

/// The new segment's alignment: the largest PT_LOAD's, at least a page.
pub(super) fn load_align(p: &Parsed) -> Result<u64> {
    let align = p
        .phdrs
        .iter()
        .filter(|ph| ph.p_type == PT_LOAD)
        .map(|ph| ph.p_align)
        .fold(PAGE, u64::max);
    if !align.is_power_of_two() {
        return Err(EditError::Malformed(format!(
            "PT_LOAD alignment {align:#x} is not a power of two"
        )));
    }
    Ok(align)
}

/// The appended segment's layout: [moved sections | program header table]
/// [dynamic array] [.dynstr], offsets relative to its start.
pub(super) struct Layout {
    pub(super) room: Room,
    /// Program headers with the new PT_LOAD.
    pub(super) phnum: usize,
    /// Whether the dynamic array moves into the segment.
    pub(super) move_dynamic: bool,
    /// Dynamic array slots where it ends up.
    pub(super) new_slots: u64,
    pub(super) block_rel: u64,
    pub(super) dyn_rel: u64,
    pub(super) dynstr_rel: u64,
    pub(super) size: u64,
}

impl Layout {
    fn moved_table(&self) -> bool {
        matches!(self.room, Room::MoveTable)
    }
}

pub(super) fn layout(p: &Parsed, room: Room, phnum: usize, dyn_count: usize, strsz: u64) -> Layout {
    // Keep one DT_NULL: the array moves unless the old one has room.
    let move_dynamic = dyn_count as u64 + 1 > p.dyn_slots;
    let new_slots = if move_dynamic {
        dyn_count as u64 + 1 + SPARE_DYN_SLOTS
    } else {
        p.dyn_slots
    };
    let mut cur = 0u64;
    let mut block_rel = 0;
    match &room {
        Room::MoveTable => cur += phnum as u64 * PHDR_SIZE,
        Room::MoveBlock(b) => {
            // Keep each moved section's address congruent to its alignment.
            block_rel = b.vaddr % b.align;
            cur = block_rel + (b.end_off - b.off);
        }
        _ => {}
    }
    let dyn_rel = round_up(cur, 8).unwrap();
    if move_dynamic {
        cur = dyn_rel + new_slots * DYN_SIZE;
    }
    Layout {
        room,
        phnum,
        move_dynamic,
        new_slots,
        block_rel,
        dyn_rel,
        dynstr_rel: cur,
        size: cur + strsz,
    }
}

/// Shifts what points into the moved block by `dv` (vaddr) and `doff`
/// (file offset): its section headers, the segments inside it, and the
/// dynamic entries holding addresses in it.
pub(super) fn shift_block(
    b: &Block,
    dv: u64,
    doff: u64,
    shdrs: &mut [SectionHeader],
    phdrs: &mut [ProgramHeader],
    dyns: &mut [Dyn],
) {
    let in_block = |a: u64| a >= b.vaddr && a - b.vaddr < b.end_off - b.off;
    for &i in &b.sections {
        shdrs[i].sh_addr = shdrs[i].sh_addr.wrapping_add(dv);
        shdrs[i].sh_offset = shdrs[i].sh_offset.wrapping_add(doff);
    }
    for ph in phdrs.iter_mut() {
        if ph.p_type != PT_LOAD && ph.p_type != PT_PHDR && ph.p_memsz > 0 && in_block(ph.p_vaddr) {
            ph.p_vaddr = ph.p_vaddr.wrapping_add(dv);
            ph.p_paddr = ph.p_paddr.wrapping_add(dv);
            ph.p_offset = ph.p_offset.wrapping_add(doff);
        }
    }
    for d in dyns.iter_mut() {
        if ADDRESS_TAGS.contains(&d.tag) && in_block(d.val) {
            d.val = d.val.wrapping_add(dv);
        }
    }
}

/// Adds the new PT_LOAD at file offset `o`, vaddr `v`, and points PT_PHDR
/// and (when it moved) PT_DYNAMIC at their new places.
pub(super) fn add_load(
    p: &Parsed,
    phdrs: &mut Vec<ProgramHeader>,
    l: &Layout,
    (o, v): (u64, u64),
    align: u64,
) {
    let new_load = ProgramHeader {
        p_type: PT_LOAD,
        // The loader writes DT_DEBUG into the dynamic array, so a segment
        // holding it must be writable (patchelf #146).
        p_flags: if l.move_dynamic { PF_R | PF_W } else { PF_R },
        p_offset: o,
        p_vaddr: v,
        p_paddr: v,
        p_filesz: l.size,
        p_memsz: l.size,
        p_align: align,
    };
    // Loaders size the mapping from the first and the last PT_LOAD, so the
    // new (highest) one goes right after the last existing one.
    let last_load = phdrs
        .iter()
        .rposition(|ph| ph.p_type == PT_LOAD)
        .expect("PT_LOAD exists");
    phdrs.insert(last_load + 1, new_load);
    let table_off = if l.moved_table() { o } else { p.header.e_phoff };
    let table_vaddr = if l.moved_table() {
        v
    } else {
        p.phdrs
            .iter()
            .find(|ph| ph.p_type == PT_PHDR)
            .map_or(0, |ph| ph.p_vaddr)
    };
    for ph in phdrs.iter_mut() {
        if ph.p_type == PT_PHDR {
            ph.p_offset = table_off;
            ph.p_vaddr = table_vaddr;
            ph.p_paddr = table_vaddr;
            ph.p_filesz = l.phnum as u64 * PHDR_SIZE;
            ph.p_memsz = ph.p_filesz;
        }
        if ph.p_type == PT_DYNAMIC && l.move_dynamic {
            ph.p_offset = o + l.dyn_rel;
            ph.p_vaddr = v + l.dyn_rel;
            ph.p_paddr = v + l.dyn_rel;
            ph.p_filesz = l.new_slots * DYN_SIZE;
            ph.p_memsz = ph.p_filesz;
        }
    }
}

/// Points the .dynstr (and, when it moved, .dynamic) section headers at
/// their places in the segment.
pub(super) fn place_dyn_sections(
    p: &Parsed,
    shdrs: &mut [SectionHeader],
    l: &Layout,
    (o, v): (u64, u64),
) {
    if let Some(i) = p.dynstr_sh {
        shdrs[i].sh_addr = v + l.dynstr_rel;
        shdrs[i].sh_offset = o + l.dynstr_rel;
        shdrs[i].sh_size = l.size - l.dynstr_rel;
    }
    if let (Some(i), true) = (p.dynamic_sh, l.move_dynamic) {
        shdrs[i].sh_addr = v + l.dyn_rel;
        shdrs[i].sh_offset = o + l.dyn_rel;
        shdrs[i].sh_size = l.new_slots * DYN_SIZE;
    }
}

/// Dynamic tags whose value is a virtual address.
pub(super) const ADDRESS_TAGS: [u64; 19] = [
    3,
    4,
    5,
    6,
    7,
    12,
    13,
    17,
    23,
    25,
    26,
    32,
    36,          // PLTGOT .. RELR
    0x6fff_fef5, // GNU_HASH
    0x6fff_fef6, // TLSDESC_PLT
    0x6fff_fef7, // TLSDESC_GOT
    0x6fff_fff0, // VERSYM
    0x6fff_fffc, // VERDEF
    0x6fff_fffe, // VERNEED
];
