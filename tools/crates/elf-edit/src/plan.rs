//! Turns a parsed ELF and a requested change into a list of byte patches
//! plus an appended tail. Nothing here writes: applying the plan to a copy of
//! the input is the caller's business, so every check happens before any
//! output exists.

use crate::error::{EditError, Result};
use crate::parse::*;
use goblin::elf::program_header::{ProgramHeader, PF_R, PF_W, PT_LOAD, PT_NULL, PT_PHDR};

const PAGE: u64 = 0x1000;
/// Never pad the file by more than this to line up the new segment's
/// vaddr-offset delta with the first segment's (see `place_segment`).
const MAX_DELTA_PAD: u64 = 64 << 20;
/// Free DT_NULL slots left after a moved dynamic array, so later edits that
/// add an entry need not move it again.
const SPARE_DYN_SLOTS: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpathKind {
    /// DT_RUNPATH: searched after LD_LIBRARY_PATH, not inherited (the default).
    Runpath,
    /// DT_RPATH: searched before LD_LIBRARY_PATH (legacy).
    Rpath,
}

impl RpathKind {
    pub fn tag(self) -> u64 {
        match self {
            RpathKind::Runpath => DT_RUNPATH,
            RpathKind::Rpath => DT_RPATH,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            RpathKind::Runpath => "RUNPATH",
            RpathKind::Rpath => "RPATH",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    Set { rpath: Vec<u8>, kind: RpathKind },
    Remove,
}

/// How the change was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The file already had exactly this value.
    Unchanged,
    /// Only existing bytes were rewritten; the file size is unchanged.
    InPlace,
    /// A new PT_LOAD holding a grown .dynstr was appended.
    Appended {
        moved_dynamic: bool,
        moved_phdrs: bool,
    },
}

impl Method {
    /// How the file was written, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Unchanged => "unchanged",
            Method::InPlace => "rewritten in place",
            Method::Appended { .. } => "grown: new .dynstr in an appended segment",
        }
    }
}

#[derive(Debug)]
pub struct Plan {
    /// (file offset, bytes) to write over the copied input.
    pub patches: Vec<(u64, Vec<u8>)>,
    /// Final file length (>= input length).
    pub new_len: u64,
    pub method: Method,
}

fn ph_bytes(p: &ProgramHeader) -> [u8; PHDR_SIZE as usize] {
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

fn dyn_bytes(dyns: &[Dyn], slots: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity((slots * DYN_SIZE) as usize);
    for d in dyns {
        out.extend_from_slice(&d.tag.to_le_bytes());
        out.extend_from_slice(&d.val.to_le_bytes());
    }
    out.resize((slots * DYN_SIZE) as usize, 0);
    out
}

fn round_up(v: u64, a: u64) -> Option<u64> {
    Some(v.checked_add(a - 1)? & !(a - 1))
}

/// A static-pie executable: ET_DYN marked PIE (DT_FLAGS_1) with no
/// PT_INTERP. glibc's self-relocation finds the dynamic section through its
/// link-time address, so the edited file would crash at start-up.
fn is_static_pie(p: &Parsed) -> bool {
    const DT_FLAGS_1: u64 = 0x6fff_fffb;
    const DF_1_PIE: u64 = 0x0800_0000;
    p.header.e_type == goblin::elf::header::ET_DYN
        && !p
            .phdrs
            .iter()
            .any(|ph| ph.p_type == goblin::elf::program_header::PT_INTERP)
        && p.dyns
            .iter()
            .any(|d| d.tag == DT_FLAGS_1 && d.val & DF_1_PIE != 0)
}

pub fn plan<S: ReadAt + ?Sized>(src: &S, p: &Parsed, edit: &Edit) -> Result<Plan> {
    if is_static_pie(p) {
        return Err(EditError::StaticPie);
    }
    match edit {
        Edit::Remove => Ok(plan_remove(p)),
        Edit::Set { rpath, kind } => plan_set(src, p, rpath, *kind),
    }
}

fn unchanged(p: &Parsed) -> Plan {
    Plan {
        patches: Vec::new(),
        new_len: p.file_len,
        method: Method::Unchanged,
    }
}

fn dynamic_patch(p: &Parsed, dyns: &[Dyn]) -> (u64, Vec<u8>) {
    (p.phdrs[p.dynamic_ph].p_offset, dyn_bytes(dyns, p.dyn_slots))
}

fn plan_remove(p: &Parsed) -> Plan {
    let kept: Vec<Dyn> = p
        .dyns
        .iter()
        .copied()
        .filter(|d| d.tag != DT_RPATH && d.tag != DT_RUNPATH)
        .collect();
    if kept.len() == p.dyns.len() {
        return unchanged(p);
    }
    // The array shrinks; the freed slots become DT_NULL (spare slots).
    Plan {
        patches: vec![dynamic_patch(p, &kept)],
        new_len: p.file_len,
        method: Method::InPlace,
    }
}

fn plan_set<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    rpath: &[u8],
    kind: RpathKind,
) -> Result<Plan> {
    check_rpath_bytes(rpath)?;
    let mut dyns = p.dyns.clone();
    let has = |dyns: &[Dyn], tag| dyns.iter().any(|d| d.tag == tag);
    // patchelf treats "no entry" as the empty rpath: setting "" adds nothing.
    if rpath.is_empty() && !has(&dyns, DT_RPATH) && !has(&dyns, DT_RUNPATH) {
        return Ok(unchanged(p));
    }
    // Same choice as patchelf: the string that counts is DT_RUNPATH's if
    // present (the loader ignores DT_RPATH then), else DT_RPATH's.
    let current = dyns
        .iter()
        .find(|d| d.tag == DT_RUNPATH)
        .or_else(|| dyns.iter().find(|d| d.tag == DT_RPATH))
        .map(|d| d.val);
    let retagged = retag(&mut dyns, kind);
    let is_rp = |d: &Dyn| d.tag == DT_RPATH || d.tag == DT_RUNPATH;
    let all_point_to = |dyns: &[Dyn], off| dyns.iter().filter(|d| is_rp(d)).all(|d| d.val == off);

    if let Some(cur) = current {
        let old = p.str_at(cur)?;
        if old == rpath && all_point_to(&dyns, cur) {
            if !retagged {
                return Ok(unchanged(p));
            }
            return Ok(Plan {
                patches: vec![dynamic_patch(p, &dyns)],
                new_len: p.file_len,
                method: Method::InPlace,
            });
        }
        if rpath.len() <= old.len() && reusable(src, p, cur, old.len() as u64)? {
            let mut s = rpath.to_vec();
            s.resize(old.len(), 0); // clear the rest of the old string
            dyns.iter_mut()
                .filter(|d| is_rp(d))
                .for_each(|d| d.val = cur);
            return Ok(Plan {
                patches: vec![(p.strtab_offset + cur, s), dynamic_patch(p, &dyns)],
                new_len: p.file_len,
                method: Method::InPlace,
            });
        }
    }
    plan_append(src, p, dyns, rpath, kind)
}

/// Refuses an rpath a loader or line-oriented tool would misread.
fn check_rpath_bytes(rpath: &[u8]) -> Result<()> {
    if rpath.contains(&0) {
        return Err(EditError::CannotPlace(
            "the rpath contains a NUL byte, which would end the string early; remove it".into(),
        ));
    }
    // A newline or other control byte is almost surely a quoting mistake,
    // and would make line-oriented tools (`rpath show`, readelf) ambiguous.
    if let Some(i) = rpath.iter().position(|&b| b < 0x20 || b == 0x7f) {
        let what = match rpath[i] {
            b'\n' => "a newline".to_string(),
            b'\t' => "a tab".to_string(),
            b'\r' => "a carriage return".to_string(),
            b => format!("the control character {b:#04x}"),
        };
        return Err(EditError::CannotPlace(format!(
            "the rpath contains {what} at byte {i}; directory names in an rpath \
             cannot hold control characters here; check the quoting of --rpath and remove it"
        )));
    }
    Ok(())
}

/// Converts the rpath entries to `kind` by retagging, as patchelf does:
/// RPATH -> RUNPATH only when there is no RUNPATH yet; RUNPATH -> RPATH
/// always for --kind rpath. Returns whether any entry changed.
fn retag(dyns: &mut [Dyn], kind: RpathKind) -> bool {
    let has = |dyns: &[Dyn], tag| dyns.iter().any(|d| d.tag == tag);
    match kind {
        RpathKind::Runpath if has(dyns, DT_RPATH) && !has(dyns, DT_RUNPATH) => {
            dyns.iter_mut()
                .filter(|d| d.tag == DT_RPATH)
                .for_each(|d| d.tag = DT_RUNPATH);
            true
        }
        RpathKind::Rpath if has(dyns, DT_RUNPATH) => {
            dyns.iter_mut()
                .filter(|d| d.tag == DT_RUNPATH)
                .for_each(|d| d.tag = DT_RPATH);
            true
        }
        _ => false,
    }
}

/// Whether the old string's bytes [off, off+len) are used only by the rpath
/// entries. Without section headers the dynamic symbols cannot be found, so
/// the answer is then a conservative no.
fn reusable<S: ReadAt + ?Sized>(src: &S, p: &Parsed, off: u64, len: u64) -> Result<bool> {
    if p.dynstr_sh.is_none() {
        return Ok(false);
    }
    let refs = p.other_string_refs(src)?;
    Ok(!refs.iter().any(|&r| r >= off && r < off + len))
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
fn place_segment(p: &Parsed, align: u64, phdr_delta: bool) -> Result<(u64, u64)> {
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

fn plan_append<S: ReadAt + ?Sized>(
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

    let program = p
        .phdrs
        .iter()
        .any(|ph| ph.p_type == goblin::elf::program_header::PT_INTERP);
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
fn appended_dynstr(p: &Parsed, rpath: &[u8]) -> (Vec<u8>, u64) {
    let str_off = p.dynstr.len() as u64;
    let mut dynstr = p.dynstr.clone();
    dynstr.extend_from_slice(rpath);
    dynstr.push(0);
    (dynstr, str_off)
}

/// Points every rpath entry at `str_off`, adding one of `kind` if none.
fn point_rpath_at(dyns: &mut Vec<Dyn>, str_off: u64, kind: RpathKind) {
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
fn load_align(p: &Parsed) -> Result<u64> {
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

/// Where the program header table finds room for one more PT_LOAD, and the
/// program headers without the PT_NULL entry given up for it (if any).
fn table_room(p: &Parsed) -> Result<(Room, Vec<ProgramHeader>)> {
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

/// The appended segment's layout: [moved sections | program header table]
/// [dynamic array] [.dynstr], offsets relative to its start.
struct Layout {
    room: Room,
    /// Program headers with the new PT_LOAD.
    phnum: usize,
    /// Whether the dynamic array moves into the segment.
    move_dynamic: bool,
    /// Dynamic array slots where it ends up.
    new_slots: u64,
    block_rel: u64,
    dyn_rel: u64,
    dynstr_rel: u64,
    size: u64,
}

impl Layout {
    fn moved_table(&self) -> bool {
        matches!(self.room, Room::MoveTable)
    }
}

fn layout(p: &Parsed, room: Room, phnum: usize, dyn_count: usize, strsz: u64) -> Layout {
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
fn shift_block(
    b: &Block,
    dv: u64,
    doff: u64,
    shdrs: &mut [goblin::elf::SectionHeader],
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
fn add_load(
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
        if ph.p_type == goblin::elf::program_header::PT_DYNAMIC && l.move_dynamic {
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
fn place_dyn_sections(
    p: &Parsed,
    shdrs: &mut [goblin::elf::SectionHeader],
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
const ADDRESS_TAGS: [u64; 19] = [
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

/// Sections relocated as one block to make room after the program header
/// table: (indices, file range, old vaddr of the start, max alignment).
struct Block {
    sections: Vec<usize>,
    off: u64,
    end_off: u64,
    vaddr: u64,
    align: u64,
}

enum Room {
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
fn movable(p: &Parsed, sh: &goblin::elf::SectionHeader) -> bool {
    use goblin::elf::section_header::*;
    let interp = sh.sh_type == SHT_PROGBITS
        && p.phdrs.iter().any(|ph| {
            ph.p_type == goblin::elf::program_header::PT_INTERP
                && ph.p_offset == sh.sh_offset
                && ph.p_filesz == sh.sh_size
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

fn phdr_room(p: &Parsed) -> Result<Room> {
    if let Some(i) = p.phdrs.iter().position(|ph| ph.p_type == PT_NULL) {
        return Ok(Room::NullSlot(i));
    }
    Ok(room_after_table(p).unwrap_or(Room::MoveTable))
}

/// Room for one more entry right after the table, inside its PT_LOAD: a
/// free gap, or sections that can move out. None: the table must move.
fn room_after_table(p: &Parsed) -> Option<Room> {
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
fn sections_in_the_way(
    p: &Parsed,
    (table_end, need): (u64, u64),
    load_end: u64,
    delta: u64,
) -> Option<Vec<usize>> {
    // File-backed sections from the end of the table on, in file order.
    let mut after: Vec<usize> = (1..p.shdrs.len())
        .filter(|&i| {
            let s = &p.shdrs[i];
            s.sh_type != goblin::elf::section_header::SHT_NOBITS
                && s.sh_size > 0
                && s.sh_offset + s.sh_size > p.header.e_phoff
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
            || s.sh_flags & u64::from(goblin::elf::section_header::SHF_ALLOC) == 0
        {
            return None;
        }
        block.push(i);
    }
    Some(block)
}

/// The sections `block` as one [`Block`], if it can move whole: alignment
/// at most a page, no other segment or section straddling it.
fn movable_block(p: &Parsed, block: Vec<usize>, delta: u64) -> Option<Block> {
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
            && s.sh_type != goblin::elf::section_header::SHT_NOBITS
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

/// Rewrites the section header table when anything in it changed, sorted
/// by file offset like a linker's output (moved sections go last among the
/// loaded ones), and fixes every index into it: sh_link, sh_info where it
/// names a section, e_shstrndx and st_shndx in the symbol tables. Symbols
/// in moved sections are shifted with them.
fn section_patches<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    mut shdrs: Vec<goblin::elf::SectionHeader>,
    shift: Option<(Vec<usize>, u64)>,
) -> Result<Vec<(u64, Vec<u8>)>> {
    use goblin::elf::section_header::*;
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
fn section_order(p: &Parsed, shdrs: &[goblin::elf::SectionHeader]) -> Vec<usize> {
    use goblin::elf::section_header::*;
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
fn symbol_patches<S: ReadAt + ?Sized>(
    src: &S,
    p: &Parsed,
    shdrs: &[goblin::elf::SectionHeader],
    remap: &dyn Fn(u32) -> u32,
    shift: Option<&(Vec<usize>, u64)>,
) -> Result<Vec<(u64, Vec<u8>)>> {
    use goblin::elf::section_header::*;
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
