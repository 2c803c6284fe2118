//! Lowering a binary's glibc floor by dropping the version of its weak
//! references, as polyfill-glibc does.
//!
//! Rust's std binds a few glibc functions weakly (`gettid`, `statx`, ...)
//! and calls them only when they are present, but the linker still records
//! their version (`GLIBC_2.30`) as a version need, which the loader checks
//! before anything runs: on an older glibc the binary is refused although
//! it would never call the function. Here each weak undefined symbol whose
//! glibc version is newer than the floor becomes unversioned
//! (`.gnu.version` index 1, `VER_NDX_GLOBAL`): the loader binds it to the
//! default version when glibc has one and to null otherwise, which is what
//! std expects. A version need only such symbols used is unlinked from its
//! file's list in `.gnu.version_r`. Nothing moves: a few existing bytes
//! change. A strong reference is never touched: the edit is refused, naming
//! the symbol.
//!
//! The tables are found where the loader finds them, through `PT_DYNAMIC`
//! (`DT_VERNEED`, `DT_VERSYM`, `DT_SYMTAB`, `DT_STRTAB`). The symbol count
//! comes from the `.dynsym` section header, so a file whose section headers
//! are missing (`sstrip`) or disagree with the dynamic array is refused,
//! never edited on a partial view; and every symbol's version index must
//! name a definition or a need still linked, in the input and in the
//! edited file read back (what the loader would otherwise read out of
//! bounds).

use crate::edit::{Method, Plan};
use crate::error::{EditError, Result};
use crate::parse::{self, read_range, ReadAt};
use elf_read::raw::{
    SHT_DYNSYM, SHT_GNU_VERNEED, SHT_GNU_VERSYM, STB_WEAK, SYM64_SIZE as SYM_SIZE, VER_NDX_GLOBAL,
};

const ENTRY: u64 = 16;

/// What lowering the floor changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FloorReport {
    /// `symbol@version` of each weak reference made unversioned.
    pub unversioned: Vec<String>,
    /// `library: version` of each version need unlinked.
    pub dropped: Vec<String>,
    /// The newest glibc version still needed, e.g. `GLIBC_2.17`.
    pub floor: Option<String>,
}

/// `GLIBC_2.30` -> (2, 30); other names -> None.
pub fn glibc_version(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("GLIBC_")?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

struct Aux {
    offset: u64,
    other: u16,
    name: String,
}

struct Need {
    offset: u64,
    file: String,
    aux: Vec<Aux>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn string(dynstr: &[u8], off: u32, what: &str) -> Result<String> {
    let tail = dynstr
        .get(off as usize..)
        .ok_or_else(|| EditError::Malformed(format!("{what} names a string outside .dynstr")))?;
    let end = tail
        .iter()
        .position(|&c| c == 0)
        .ok_or_else(|| EditError::Malformed(format!("{what}: unterminated string")))?;
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

/// The version needs of `.gnu.version_r` (section bytes `r`), each entry's
/// offset relative to the section; every link stays inside it and the walk
/// ends after at most as many entries as fit (a cycle cannot loop).
fn read_needs(r: &[u8], dynstr: &[u8]) -> Result<Vec<Need>> {
    let fits = r.len() as u64 / ENTRY;
    let inside = |off: u64| off.checked_add(ENTRY).is_some_and(|e| e <= r.len() as u64);
    let mut needs = Vec::new();
    let mut off = 0u64;
    for _ in 0..fits {
        if !inside(off) {
            return Err(EditError::Malformed(
                ".gnu.version_r entry outside the section".into(),
            ));
        }
        let o = off as usize;
        let (cnt, file, aux_rel, next) = (
            u16_at(r, o + 2),
            u32_at(r, o + 4),
            u32_at(r, o + 8),
            u32_at(r, o + 12),
        );
        let mut need = Need {
            offset: off,
            file: string(dynstr, file, ".gnu.version_r")?,
            aux: Vec::new(),
        };
        let mut a = off + u64::from(aux_rel);
        for i in 0..cnt {
            if !inside(a) || need.aux.len() as u64 >= fits {
                return Err(EditError::Malformed(
                    ".gnu.version_r auxiliary entry outside the section".into(),
                ));
            }
            let ao = a as usize;
            need.aux.push(Aux {
                offset: a,
                other: u16_at(r, ao + 6),
                name: string(dynstr, u32_at(r, ao + 8), ".gnu.version_r")?,
            });
            let step = u32_at(r, ao + 12);
            if step == 0 && i + 1 < cnt {
                return Err(EditError::Malformed(
                    ".gnu.version_r: vn_cnt exceeds the auxiliary list".into(),
                ));
            }
            a += u64::from(step);
        }
        needs.push(need);
        if next == 0 {
            return Ok(needs);
        }
        off += u64::from(next);
    }
    Err(EditError::Malformed(
        ".gnu.version_r entries do not end".into(),
    ))
}

/// Bytes to write at a file offset.
type Patch = (u64, Vec<u8>);

/// The version tables of a dynamically linked file, read.
struct Tables {
    verneed_offset: u64,
    versym_offset: u64,
    needs: Vec<Need>,
    versym: Vec<u8>,
    syms: Vec<u8>,
    symstr: Vec<u8>,
    /// `DT_VERDEFNUM`: indexes 2 to this + 1 are the file's own versions.
    verdefs: u64,
}

const DT_SYMTAB: u64 = 6;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_VERDEFNUM: u64 = 0x6fff_fffd;
const DT_VERNEED: u64 = 0x6fff_fffe;
const DT_VERNEEDNUM: u64 = 0x6fff_ffff;

/// Reads the version tables where the loader reads them: `PT_DYNAMIC`'s
/// `DT_VERNEED`, `DT_VERSYM`, `DT_SYMTAB` and `DT_STRTAB`. The symbol
/// count comes from the `.dynsym` section header, so the section headers
/// must be there and agree with the dynamic array (same offsets, one
/// `.gnu.version` entry per symbol, `DT_VERNEEDNUM` entries); otherwise
/// the edit is refused rather than made on a partial view. `None` when the
/// loader sees no version needs (no `DT_VERNEED`).
fn read_tables<S: ReadAt + ?Sized>(src: &S, p: &parse::Parsed) -> Result<Option<Tables>> {
    let tag = |t: u64| p.dyns.iter().find(|d| d.tag == t).map(|d| d.val);
    let Some(verneed_addr) = tag(DT_VERNEED) else {
        return Ok(None);
    };
    let refuse = |why: String| {
        EditError::Refused(format!("{why}; the version tables cannot be edited safely"))
    };
    let (Some(versym_addr), Some(symtab_addr)) = (tag(DT_VERSYM), tag(DT_SYMTAB)) else {
        return Err(refuse(
            "the dynamic section has DT_VERNEED but no DT_VERSYM or DT_SYMTAB".into(),
        ));
    };
    let offset = |addr: u64, what: &str| {
        elf_read::vaddr_to_offset(&p.phdrs, addr, 1).ok_or_else(|| {
            refuse(format!(
                "{what} (address {addr:#x}) is in no loaded segment"
            ))
        })
    };
    let verneed_off = offset(verneed_addr, "DT_VERNEED")?;
    let versym_off = offset(versym_addr, "DT_VERSYM")?;
    let symtab_off = offset(symtab_addr, "DT_SYMTAB")?;
    // The section describing what the loader reads at `off`.
    let section = |t: u32, off: u64, what: &str| {
        let found = p.shdrs.iter().find(|s| s.sh_type == t);
        match found {
            None if p.shdrs.is_empty() => Err(refuse(format!(
                "no section headers (stripped with sstrip?): the size of {what} is unknown"
            ))),
            None => Err(refuse(format!(
                "the dynamic section names {what} but no section header describes it"
            ))),
            Some(sh) if sh.sh_offset != off => Err(refuse(format!(
                "the {what} section header is at offset {}, but PT_DYNAMIC puts it at {off}",
                sh.sh_offset
            ))),
            Some(sh) => Ok(sh),
        }
    };
    let verneed = section(SHT_GNU_VERNEED, verneed_off, ".gnu.version_r")?;
    let versym = section(SHT_GNU_VERSYM, versym_off, ".gnu.version")?;
    let dynsym = section(SHT_DYNSYM, symtab_off, ".dynsym")?;
    let symbols = dynsym.sh_size / SYM_SIZE;
    if versym.sh_size != symbols * 2 {
        return Err(refuse(format!(
            ".gnu.version is {} bytes but .dynsym has {symbols} symbols (the loader reads {} bytes)",
            versym.sh_size,
            symbols * 2
        )));
    }
    // Strings are where the loader looks: DT_STRTAB.
    let dynstr = &p.dynstr;
    let r = read_range(src, verneed.sh_offset, verneed.sh_size, ".gnu.version_r")?;
    let needs = read_needs(&r, dynstr)?;
    if let Some(n) = tag(DT_VERNEEDNUM) {
        if n != needs.len() as u64 {
            return Err(refuse(format!(
                "DT_VERNEEDNUM is {n} but .gnu.version_r links {} entries",
                needs.len()
            )));
        }
    }
    Ok(Some(Tables {
        verneed_offset: verneed_off,
        versym_offset: versym_off,
        needs,
        versym: read_range(src, versym_off, versym.sh_size, ".gnu.version")?,
        syms: read_range(src, symtab_off, symbols * SYM_SIZE, ".dynsym")?,
        symstr: dynstr.clone(),
        verdefs: tag(DT_VERDEFNUM).unwrap_or(0),
    }))
}

/// Checks every symbol's version index as the loader resolves it: local
/// (0), global (1), one of the file's own definitions (2 to
/// `DT_VERDEFNUM + 1`), or a version need still linked in
/// `.gnu.version_r`. An index to anything else makes the loader read out
/// of bounds or refuse the file.
fn check_indexes(t: &Tables) -> Result<()> {
    let needed: std::collections::HashSet<u16> = t
        .needs
        .iter()
        .flat_map(|n| n.aux.iter().map(|a| a.other & 0x7fff))
        .collect();
    for i in 1..t.versym.len() / 2 {
        let ndx = u16_at(&t.versym, i * 2) & 0x7fff;
        if ndx <= 1 || u64::from(ndx) <= t.verdefs + 1 || needed.contains(&ndx) {
            continue;
        }
        let s = i * SYM_SIZE as usize;
        let name = string(&t.symstr, u32_at(&t.syms, s), ".dynsym")?;
        return Err(EditError::Malformed(format!(
            "symbol {name} has version index {ndx}, which no version definition or need has"
        )));
    }
    Ok(())
}

/// The `.gnu.version` patches making every symbol of version need `a`
/// unversioned, with their `symbol@version`; refuses a strong reference.
fn unversion(t: &Tables, a: &Aux) -> Result<Vec<(Patch, String)>> {
    let count = (t.syms.len() as u64 / SYM_SIZE).min(t.versym.len() as u64 / 2) as usize;
    let mut out = Vec::new();
    for i in 1..count {
        if u16_at(&t.versym, i * 2) & 0x7fff != a.other {
            continue;
        }
        let s = i * SYM_SIZE as usize;
        let name = string(&t.symstr, u32_at(&t.syms, s), ".dynsym")?;
        let undefined = u16_at(&t.syms, s + 6) == 0;
        if !undefined {
            return Err(EditError::Refused(format!(
                "{name}@{} is defined in this file, not a reference, yet carries the version of \
                 a need; the file is inconsistent and is left alone",
                a.name
            )));
        }
        if t.syms[s + 4] >> 4 != STB_WEAK {
            return Err(EditError::Refused(format!(
                "{name}@{} is a strong reference: the binary needs glibc {} for it (a strong \
                 reference is never touched; only weak ones, which the program checks for null, \
                 can lose their version)",
                a.name,
                a.name.trim_start_matches("GLIBC_")
            )));
        }
        let patch = (
            t.versym_offset + i as u64 * 2,
            VER_NDX_GLOBAL.to_le_bytes().to_vec(),
        );
        out.push((patch, format!("{name}@{}", a.name)));
    }
    Ok(out)
}

/// The `.gnu.version_r` patches leaving only `kept` in `need`'s list:
/// `vn_cnt`, `vn_aux`, then each kept entry's `vna_next`.
fn relink(t: &Tables, need: &Need, kept: &[&Aux]) -> Vec<Patch> {
    let base = t.verneed_offset + need.offset;
    let mut patches = vec![
        (base + 2, (kept.len() as u16).to_le_bytes().to_vec()),
        (
            base + 8,
            ((kept[0].offset - need.offset) as u32)
                .to_le_bytes()
                .to_vec(),
        ),
    ];
    for (k, a) in kept.iter().enumerate() {
        let next = kept.get(k + 1).map_or(0, |n| (n.offset - a.offset) as u32);
        patches.push((
            t.verneed_offset + a.offset + 12,
            next.to_le_bytes().to_vec(),
        ));
    }
    patches
}

/// Plans making every weak reference to a glibc version newer than `max`
/// unversioned; refuses a strong one. `Method::Unchanged` when there is none.
pub fn plan_glibc_floor<S: ReadAt + ?Sized>(
    src: &S,
    max: (u32, u32),
) -> Result<(Plan, FloorReport)> {
    // The edit rewrites version indexes and links in place: the same on
    // every CPU the tool's wheels are built for.
    let p = parse::parse_for(src, &elf_read::Arch::ALL)?;
    let mut report = FloorReport::default();
    let Some(t) = read_tables(src, &p)? else {
        let plan = Plan {
            patches: Vec::new(),
            new_len: p.file_len,
            method: Method::Unchanged,
        };
        return Ok((plan, report));
    };
    check_indexes(&t)?;
    let too_new = |a: &Aux| glibc_version(&a.name).is_some_and(|v| v > max);
    let mut patches = Vec::new();
    for need in &t.needs {
        for a in need.aux.iter().filter(|a| too_new(a)) {
            for (patch, what) in unversion(&t, a)? {
                patches.push(patch);
                report.unversioned.push(what);
            }
            report.dropped.push(format!("{}: {}", need.file, a.name));
        }
        let kept: Vec<&Aux> = need.aux.iter().filter(|a| !too_new(a)).collect();
        if kept.is_empty() {
            return Err(EditError::Refused(format!(
                "every version {} is needed at is newer than glibc {}.{}; nothing would be left of its entry",
                need.file, max.0, max.1
            )));
        }
        if kept.len() < need.aux.len() {
            patches.extend(relink(&t, need, &kept));
        }
    }
    report.floor = t
        .needs
        .iter()
        .flat_map(|n| n.aux.iter())
        .filter(|a| !too_new(a))
        .filter_map(|a| glibc_version(&a.name).map(|v| (v, a.name.clone())))
        .max()
        .map(|(_, n)| n);
    let method = if patches.is_empty() {
        Method::Unchanged
    } else {
        Method::InPlace
    };
    Ok((
        Plan {
            patches,
            new_len: p.file_len,
            method,
        },
        report,
    ))
}
