//! `lower_glibc_floor` judged by the real loader: a program built against a
//! library with an old and a new version node (named as glibc's are) and a
//! weak reference to the new one is refused by a build of that library
//! without the new node; after the edit it runs there (the reference is
//! null) and still binds the function where it exists. A strong reference
//! is refused by the edit, named. The floor is 2.50: the programs link
//! against the build machine's glibc (its own symbols need up to 2.34).

/// Above the build machine's glibc, below the library's new version.
const MAX: (u32, u32) = (2, 50);

use std::path::Path;
use std::process::Command;

use elf_edit::lower_glibc_floor;

const OLD: &str = "GLIBC_2.2.5 { global: old_fn; local: *; };\n";
const NEW: &str =
    "GLIBC_2.2.5 { global: old_fn; local: *; };\nGLIBC_2.99 { global: new_fn; } GLIBC_2.2.5;\n";

fn gcc(dir: &Path, args: &[&str]) {
    let out = Command::new("gcc")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("gcc");
    assert!(
        out.status.success(),
        "gcc {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// libfake.so in `dir/<sub>` with the version script `script`.
fn library(dir: &Path, sub: &str, script: &str, with_new: bool) {
    let d = dir.join(sub);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("v.map"), script).unwrap();
    let mut src = String::from("int old_fn(void) { return 1; }\n");
    if with_new {
        src.push_str("int new_fn(void) { return 2; }\n");
    }
    std::fs::write(d.join("fake.c"), src).unwrap();
    gcc(
        &d,
        &[
            "-shared",
            "-fPIC",
            "-Wl,--version-script=v.map",
            "-Wl,-soname,libfake.so",
            "-o",
            "libfake.so",
            "fake.c",
        ],
    );
}

/// The program, linked against the new library; `weak` makes new_fn's reference weak.
fn program(dir: &Path, name: &str, weak: bool) {
    let decl = if weak { "__attribute__((weak)) " } else { "" };
    std::fs::write(
        dir.join(format!("{name}.c")),
        format!(
            "#include <stdio.h>\nint old_fn(void);\n{decl}int new_fn(void);\n\
             int main(void) {{ printf(\"%d %s\\n\", old_fn(), new_fn && new_fn() == 2 ? \"new\" : \"null\"); return 0; }}\n"
        ),
    )
    .unwrap();
    gcc(dir, &[&format!("{name}.c"), "-Lnew", "-lfake", "-o", name]);
}

fn run(dir: &Path, program: &str, lib: &str) -> (bool, String) {
    let out = Command::new(dir.join(program))
        .env("LD_LIBRARY_PATH", dir.join(lib))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn weak_references_lose_their_version_and_the_loader_agrees() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    library(dir, "old", OLD, false);
    library(dir, "new", NEW, true);
    program(dir, "weak", true);

    let (ok, text) = run(dir, "weak", "old");
    assert!(
        !ok && text.contains("GLIBC_2.99' not found"),
        "before the edit the old library must refuse it: {text}"
    );

    let report = lower_glibc_floor(&dir.join("weak"), &dir.join("floored"), MAX).unwrap();
    assert_eq!(report.unversioned, ["new_fn@GLIBC_2.99"]);
    assert_eq!(report.dropped, ["libfake.so: GLIBC_2.99"]);
    let floor = report
        .floor
        .as_deref()
        .and_then(elf_edit::glibc_version)
        .unwrap();
    assert!(floor <= MAX, "{report:?}");
    assert_eq!(
        run(dir, "floored", "old"),
        (true, "1 null\n".into()),
        "without the new version: null"
    );
    assert_eq!(
        run(dir, "floored", "new"),
        (true, "1 new\n".into()),
        "with it: bound"
    );

    // Nothing left to do: the output is the input's bytes.
    lower_glibc_floor(&dir.join("floored"), &dir.join("again"), MAX).unwrap();
    assert_eq!(
        std::fs::read(dir.join("floored")).unwrap(),
        std::fs::read(dir.join("again")).unwrap()
    );
    // A floor at the new version changes nothing either.
    let kept = lower_glibc_floor(&dir.join("weak"), &dir.join("kept"), (2, 99)).unwrap();
    assert!(
        kept.unversioned.is_empty() && kept.floor.as_deref() == Some("GLIBC_2.99"),
        "{kept:?}"
    );
}

#[test]
fn a_strong_reference_is_refused_and_nothing_is_written() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    library(dir, "new", NEW, true);
    program(dir, "strong", false);
    let e = format!(
        "{:#}",
        lower_glibc_floor(&dir.join("strong"), &dir.join("out"), MAX).unwrap_err()
    );
    assert!(
        e.contains("new_fn@GLIBC_2.99 is a strong reference: the binary needs glibc 2.99"),
        "{e}"
    );
    assert!(!dir.join("out").exists());
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !names.iter().any(|n| n.to_string_lossy().contains(".tmp")),
        "{names:?}"
    );
}

/// Section header `i` of the ELF64 file `b`: its offset in `b`.
fn shdr_at(b: &[u8], i: usize) -> usize {
    let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap()) as usize;
    shoff + i * 64
}

/// The index of the first section header of type `t`.
fn section_of_type(b: &[u8], t: u32) -> usize {
    let shnum = u16::from_le_bytes([b[0x3c], b[0x3d]]) as usize;
    (0..shnum)
        .find(|&i| {
            let at = shdr_at(b, i);
            u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) == t
        })
        .unwrap()
}

const SHT_GNU_VERSYM: u32 = 0x6fff_ffff;

/// The loader reads the version tables through PT_DYNAMIC; section headers
/// that are missing, stripped or disagree with it are refused (before, a
/// short `.gnu.version` made the edit drop a need still in use, and a file
/// without section headers was "no versioned glibc symbol", exit 0).
#[test]
fn section_headers_that_disagree_with_the_loader_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    library(dir, "new", NEW, true);
    program(dir, "weak", true);
    let good = std::fs::read(dir.join("weak")).unwrap();

    let mut short = good.clone();
    let at = shdr_at(&short, section_of_type(&short, SHT_GNU_VERSYM)) + 0x20;
    let size = u64::from_le_bytes(short[at..at + 8].try_into().unwrap());
    short[at..at + 8].copy_from_slice(&(size - 2).to_le_bytes());

    let mut no_versym = good.clone();
    let at = shdr_at(&no_versym, section_of_type(&no_versym, SHT_GNU_VERSYM)) + 4;
    no_versym[at..at + 4].copy_from_slice(&1u32.to_le_bytes()); // SHT_PROGBITS

    let mut stripped = good.clone();
    stripped[0x28..0x30].fill(0); // e_shoff
    stripped[0x3c..0x40].fill(0); // e_shnum, e_shstrndx

    for (name, bytes, want) in [
        ("short", &short, ".gnu.version is"),
        ("no-versym", &no_versym, "no section header describes it"),
        ("stripped", &stripped, "no section headers"),
    ] {
        std::fs::write(dir.join(name), bytes).unwrap();
        let out = dir.join(format!("{name}.out"));
        let e = format!(
            "{:#}",
            lower_glibc_floor(&dir.join(name), &out, MAX).unwrap_err()
        );
        assert!(e.contains(want) && e.contains("refused"), "{name}: {e}");
        assert!(!out.exists(), "{name}");
    }
    // Negative control: the untouched file is edited.
    lower_glibc_floor(&dir.join("weak"), &dir.join("ok"), MAX).unwrap();

    // -o naming the input is refused: the input is never changed.
    let e = format!(
        "{:#}",
        lower_glibc_floor(&dir.join("weak"), &dir.join("weak"), MAX).unwrap_err()
    );
    assert!(e.contains("is the input file"), "{e}");
    assert_eq!(std::fs::read(dir.join("weak")).unwrap(), good);
}

const SHT_DYNSYM: u32 = 11;

/// `b` with new_fn's `.dynsym` entry defined (`st_shndx` 1) and its
/// version still a need's.
fn new_fn_defined(b: &[u8]) -> Vec<u8> {
    let field = |at: usize, off: usize| {
        u64::from_le_bytes(b[at + off..at + off + 8].try_into().unwrap()) as usize
    };
    let dynsym = shdr_at(b, section_of_type(b, SHT_DYNSYM));
    let link = u32::from_le_bytes(b[dynsym + 0x28..dynsym + 0x2c].try_into().unwrap()) as usize;
    let strtab = field(shdr_at(b, link), 0x18);
    let (syms, size) = (field(dynsym, 0x18), field(dynsym, 0x20));
    let s = (syms..syms + size)
        .step_by(24)
        .find(|&s| {
            let name = strtab + u32::from_le_bytes(b[s..s + 4].try_into().unwrap()) as usize;
            b[name..].starts_with(b"new_fn\0")
        })
        .unwrap();
    let mut out = b.to_vec();
    out[s + 6..s + 8].copy_from_slice(&1u16.to_le_bytes());
    out
}

/// A symbol defined in the file that carries a needed version (an
/// inconsistent file) is refused as what it is, weak or strong: defined,
/// not "a strong reference".
#[test]
fn a_defined_symbol_with_a_needed_version_is_named_defined() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    library(dir, "new", NEW, true);
    for (name, weak) in [("weak", true), ("strong", false)] {
        program(dir, name, weak);
        let defined = format!("{name}-defined");
        let bytes = std::fs::read(dir.join(name)).unwrap();
        std::fs::write(dir.join(&defined), new_fn_defined(&bytes)).unwrap();
        let out = dir.join(format!("{defined}.out"));
        let e = format!(
            "{:#}",
            lower_glibc_floor(&dir.join(&defined), &out, MAX).unwrap_err()
        );
        assert!(
            e.contains("new_fn@GLIBC_2.99 is defined in this file, not a reference")
                && !e.contains("strong reference"),
            "{name}: {e}"
        );
        assert!(!out.exists(), "{name}");
    }
}
