//! Turns a parsed ELF and a requested change into a list of byte patches
//! plus an appended tail. Nothing here writes: applying the plan to a copy of
//! the input is the caller's business, so every check happens before any
//! output exists.
//!
//! This module decides the strategy (unchanged, rewrite in place, append);
//! [`grow`] lays out the appended segment, [`room`] finds room for its
//! program header, [`patches`] turns moved headers and tables into bytes.

mod grow;
mod patches;
mod room;

use crate::edit::{Edit, Method, Plan, RpathKind};
use crate::error::{EditError, Result};
use crate::parse::*;
use elf_read::raw::{
    DF_1_PIE, DT_FLAGS_1, ET_DYN, PF_R, PF_W, PT_DYNAMIC, PT_INTERP, PT_LOAD, PT_NULL, PT_PHDR,
    SHF_ALLOC, SHT_NOBITS,
};
use elf_read::{ProgramHeader, SectionHeader};
use grow::*;
use patches::*;
use room::*;

/// A static-pie executable: ET_DYN marked PIE (DT_FLAGS_1) with no
/// PT_INTERP. glibc's self-relocation finds the dynamic section through its
/// link-time address, so the edited file would crash at start-up.
fn is_static_pie(p: &Parsed) -> bool {
    p.header.e_type == ET_DYN
        && !p.phdrs.iter().any(|ph| ph.p_type == PT_INTERP)
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
