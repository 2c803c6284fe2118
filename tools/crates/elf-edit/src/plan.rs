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

/// Patch for fields of section header `idx` (sh_addr at +16, sh_offset +24,
/// sh_size +32).
fn shdr_patch(p: &Parsed, idx: usize, addr: u64, offset: u64, size: u64) -> (u64, Vec<u8>) {
    let mut b = Vec::with_capacity(24);
    b.extend_from_slice(&addr.to_le_bytes());
    b.extend_from_slice(&offset.to_le_bytes());
    b.extend_from_slice(&size.to_le_bytes());
    (p.header.e_shoff + idx as u64 * SHDR_SIZE + 16, b)
}

pub fn plan<S: ReadAt + ?Sized>(src: &S, p: &Parsed, edit: &Edit) -> Result<Plan> {
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
    if rpath.contains(&0) {
        return Err(EditError::CannotPlace(
            "the rpath contains a NUL byte, which would end the string early; remove it".into(),
        ));
    }
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
    // Convert the kind by retagging, as patchelf does: RPATH -> RUNPATH only
    // when there is no RUNPATH yet; RUNPATH -> RPATH always for --kind rpath.
    let mut retagged = false;
    match kind {
        RpathKind::Runpath if has(&dyns, DT_RPATH) && !has(&dyns, DT_RUNPATH) => {
            dyns.iter_mut()
                .filter(|d| d.tag == DT_RPATH)
                .for_each(|d| d.tag = DT_RUNPATH);
            retagged = true;
        }
        RpathKind::Rpath if has(&dyns, DT_RUNPATH) => {
            dyns.iter_mut()
                .filter(|d| d.tag == DT_RUNPATH)
                .for_each(|d| d.tag = DT_RPATH);
            retagged = true;
        }
        _ => {}
    }
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
    plan_append(p, dyns, rpath, kind)
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
/// else). When cheap we also make `V - O` equal to the first PT_LOAD's
/// delta: kernels before 5.18 compute AT_PHDR as load base + e_phoff, which
/// is then right for a program header table moved into this segment.
fn place_segment(p: &Parsed, align: u64) -> Result<(u64, u64)> {
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
    if let Some(delta) = first.p_vaddr.checked_sub(first.p_offset) {
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

fn plan_append(p: &Parsed, mut dyns: Vec<Dyn>, rpath: &[u8], kind: RpathKind) -> Result<Plan> {
    let is_rp = |d: &Dyn| d.tag == DT_RPATH || d.tag == DT_RUNPATH;
    // New .dynstr = old contents + new string, so every existing offset
    // (symbol names, NEEDED, version names) stays valid.
    let str_off = p.dynstr.len() as u64;
    let mut dynstr = p.dynstr.clone();
    dynstr.extend_from_slice(rpath);
    dynstr.push(0);
    let strsz = dynstr.len() as u64;

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
    // Keep one DT_NULL: the array moves unless the old one has room.
    let move_dynamic = dyns.len() as u64 + 1 > p.dyn_slots;
    let new_slots = if move_dynamic {
        dyns.len() as u64 + 1 + SPARE_DYN_SLOTS
    } else {
        p.dyn_slots
    };

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

    // The program header table gets one more PT_LOAD. It is rewritten in
    // place only if a PT_NULL entry can be given up for it.
    let mut phdrs = p.phdrs.clone();
    let moved_phdrs = match phdrs.iter().position(|ph| ph.p_type == PT_NULL) {
        Some(i) => {
            phdrs.remove(i);
            false
        }
        None => true,
    };
    let phnum = phdrs.len() + 1;
    if phnum >= 0xffff {
        return Err(EditError::CannotPlace(
            "the program header table is full (65535 entries)".into(),
        ));
    }

    // Segment layout: [phdr table] [dynamic array] [.dynstr].
    let mut cur = 0u64;
    let phdr_rel = cur;
    if moved_phdrs {
        cur += phnum as u64 * PHDR_SIZE;
    }
    let dyn_rel = cur;
    if move_dynamic {
        cur += new_slots * DYN_SIZE;
    }
    let dynstr_rel = cur;
    cur += strsz;
    let seg_size = cur;

    let (o, v) = place_segment(p, align)?;
    let too_big = || {
        EditError::CannotPlace("the new segment would lie beyond the 64-bit address space".into())
    };
    o.checked_add(seg_size).ok_or_else(too_big)?;
    v.checked_add(seg_size).ok_or_else(too_big)?;

    for d in dyns.iter_mut() {
        match d.tag {
            DT_STRTAB => d.val = v + dynstr_rel,
            DT_STRSZ => d.val = strsz,
            _ => {}
        }
    }

    let new_load = ProgramHeader {
        p_type: PT_LOAD,
        // The loader writes DT_DEBUG into the dynamic array, so a segment
        // holding it must be writable (patchelf #146).
        p_flags: if move_dynamic { PF_R | PF_W } else { PF_R },
        p_offset: o,
        p_vaddr: v,
        p_paddr: v,
        p_filesz: seg_size,
        p_memsz: seg_size,
        p_align: align,
    };
    // Loaders size the mapping from the first and the last PT_LOAD, so the
    // new (highest) one goes right after the last existing one.
    let last_load = phdrs
        .iter()
        .rposition(|ph| ph.p_type == PT_LOAD)
        .expect("PT_LOAD exists");
    phdrs.insert(last_load + 1, new_load);
    for ph in phdrs.iter_mut() {
        if ph.p_type == PT_PHDR && moved_phdrs {
            ph.p_offset = o + phdr_rel;
            ph.p_vaddr = v + phdr_rel;
            ph.p_paddr = v + phdr_rel;
            ph.p_filesz = phnum as u64 * PHDR_SIZE;
            ph.p_memsz = ph.p_filesz;
        }
        if ph.p_type == goblin::elf::program_header::PT_DYNAMIC && move_dynamic {
            ph.p_offset = o + dyn_rel;
            ph.p_vaddr = v + dyn_rel;
            ph.p_paddr = v + dyn_rel;
            ph.p_filesz = new_slots * DYN_SIZE;
            ph.p_memsz = ph.p_filesz;
        }
    }
    let table: Vec<u8> = phdrs.iter().flat_map(ph_bytes).collect();

    let mut patches = Vec::new();
    let mut segment = Vec::with_capacity(seg_size as usize);
    if moved_phdrs {
        segment.extend_from_slice(&table);
        let mut eh = Vec::with_capacity(8);
        eh.extend_from_slice(&(o + phdr_rel).to_le_bytes());
        patches.push((32, eh)); // e_phoff
        patches.push((56, (phnum as u16).to_le_bytes().to_vec())); // e_phnum
    } else {
        patches.push((p.header.e_phoff, table));
    }
    if move_dynamic {
        segment.extend_from_slice(&dyn_bytes(&dyns, new_slots));
    } else {
        patches.push((
            p.phdrs[p.dynamic_ph].p_offset,
            dyn_bytes(&dyns, p.dyn_slots),
        ));
    }
    segment.extend_from_slice(&dynstr);
    debug_assert_eq!(segment.len() as u64, seg_size);

    if let Some(i) = p.dynstr_sh {
        patches.push(shdr_patch(p, i, v + dynstr_rel, o + dynstr_rel, strsz));
    }
    if let (Some(i), true) = (p.dynamic_sh, move_dynamic) {
        patches.push(shdr_patch(
            p,
            i,
            v + dyn_rel,
            o + dyn_rel,
            new_slots * DYN_SIZE,
        ));
    }
    patches.push((o, segment));
    Ok(Plan {
        patches,
        new_len: o + seg_size,
        method: Method::Appended {
            moved_dynamic: move_dynamic,
            moved_phdrs,
        },
    })
}
