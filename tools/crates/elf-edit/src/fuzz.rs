//! The fuzz body and its goblin oracle (feature `fuzzing`: the fuzz crate
//! and this crate's own tests enable it; the tool does not ship them).

use crate::parse::{DT_RPATH, DT_RUNPATH};
use crate::{edit_bytes, read_rpath_bytes, Edit, Method, RpathKind};

/// DT_RUNPATH / DT_RPATH strings as goblin reads them: its header,
/// program header and dynamic section parsers, its vaddr-to-offset mapping
/// and its string table, i.e. the parts of the file the editor writes.
/// (A full `Elf::parse` also walks symbol hash tables, which fuzzed inputs
/// corrupt in ways unrelated to the edit.)
pub fn goblin_rpaths(bytes: &[u8]) -> std::result::Result<Vec<(RpathKind, String)>, String> {
    use goblin::elf::{dynamic::Dynamic, program_header::ProgramHeader};
    let err = |e: goblin::error::Error| e.to_string();
    let header = goblin::elf64::header::Header::parse(bytes).map_err(err)?;
    let ctx = goblin::container::Ctx::new(
        goblin::container::Container::Big,
        goblin::container::Endian::Little,
    );
    let phdrs = ProgramHeader::parse(bytes, header.e_phoff as usize, header.e_phnum as usize, ctx)
        .map_err(err)?;
    let dynamic = Dynamic::parse(bytes, &phdrs, ctx)
        .map_err(err)?
        .ok_or("no PT_DYNAMIC")?;
    let strtab = goblin::strtab::Strtab::parse(bytes, dynamic.info.strtab, dynamic.info.strsz, 0)
        .map_err(err)?;
    let mut out = Vec::new();
    for d in &dynamic.dyns {
        let kind = match d.d_tag {
            DT_RUNPATH => RpathKind::Runpath,
            DT_RPATH => RpathKind::Rpath,
            _ => continue,
        };
        let s = strtab
            .get_at(d.d_val as usize)
            .ok_or_else(|| format!("bad string offset {:#x}", d.d_val))?;
        out.push((kind, s.to_string()));
    }
    Ok(out)
}

/// The fuzz body, also run over the committed corpus by `cargo test`:
/// parsing and editing arbitrary bytes never panics, and every successful
/// edit yields a file that this crate and goblin parse, showing the new value.
pub fn fuzz_one(data: &[u8]) {
    let _ = read_rpath_bytes(data);
    let goblin_ok = goblin_rpaths(data).is_ok();
    let long =
        b"$ORIGIN/../rocm/lib:$ORIGIN/../lib:$ORIGIN:/opt/rocm/lib:/usr/local/lib/fuzz".to_vec();
    for (value, kind) in [
        (long, RpathKind::Runpath),
        (b"$ORIGIN".to_vec(), RpathKind::Rpath),
        (Vec::new(), RpathKind::Runpath),
    ] {
        let edit = Edit::Set {
            rpath: value.clone(),
            kind,
        };
        if let Ok((out, method)) = edit_bytes(data, &edit) {
            let got = read_rpath_bytes(&out).expect("edited output must re-parse");
            if value.is_empty() && method == Method::Unchanged {
                // Setting "" on a file without an rpath adds nothing.
                assert!(got.iter().all(|e| e.value.is_empty()), "{got:?}");
                continue;
            }
            assert!(
                got.iter().any(|e| e.value == value && e.kind == kind),
                "edited output does not carry the new value: {got:?}"
            );
            if goblin_ok {
                let seen = goblin_rpaths(&out).expect("goblin must parse the edited output");
                let want = String::from_utf8_lossy(&value);
                assert!(
                    seen.iter().any(|(k, s)| *k == kind && *s == want),
                    "goblin sees {seen:?}, expected {want:?}"
                );
            }
        }
    }
    if let Ok((out, _)) = edit_bytes(data, &Edit::Remove) {
        let got = read_rpath_bytes(&out).expect("output of remove must re-parse");
        assert!(got.is_empty(), "remove left {got:?}");
    }
}
