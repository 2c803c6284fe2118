//! Every rejected input leaves the input byte-for-byte unchanged and no
//! output (not even a temporary file) behind, and says what is wrong.

mod common;
use common::*;
use elf_edit::{EditError, RpathKind};
use std::path::Path;
use std::process::Command;

fn assert_rejected(input: &Path, expect: fn(&EditError) -> bool, words: &str) {
    let d = tempdir();
    let local = copy_in(input, d.path(), "input");
    let before = std::fs::read(&local).unwrap();
    let out = d.path().join("out");
    // Both the separate-output and the in-place form.
    for target in [Some(out.as_path()), None] {
        let err = elf_edit::edit_file(
            &local,
            target,
            &set("$ORIGIN/../rocm/lib:$ORIGIN", RpathKind::Runpath),
        )
        .expect_err("edit must fail");
        let kind = err
            .downcast_ref::<EditError>()
            .unwrap_or_else(|| panic!("not an EditError: {err:#}"));
        assert!(
            expect(kind),
            "{}: unexpected error {kind:?}",
            input.display()
        );
        let msg = format!("{err:#}");
        assert!(msg.contains(words), "message {msg:?} lacks {words:?}");
        assert_eq!(std::fs::read(&local).unwrap(), before, "input changed");
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("input")],
            "output left behind"
        );
    }
    // `show` fails the same way.
    assert!(elf_edit::read_rpath(&local).is_err());
}

#[test]
fn not_elf() {
    // A shell script from /usr/bin.
    assert_rejected(
        Path::new("/usr/bin/ldd"),
        |e| matches!(e, EditError::NotElf),
        "not an ELF file",
    );
    let d = tempdir();
    let empty = d.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert_rejected(
        &empty,
        |e| matches!(e, EditError::NotElf),
        "not an ELF file",
    );
}

#[test]
fn truncated() {
    let d = tempdir();
    let full = std::fs::read(Path::new(SYSLIB).join("libz.so.1")).unwrap();
    // Cut inside the identification, the header, the program headers, and
    // before the dynamic section.
    for len in [10usize, 40, 200, 4096] {
        let p = d.path().join(format!("libz-{len}"));
        std::fs::write(&p, &full[..len]).unwrap();
        assert_rejected(
            &p,
            |e| matches!(e, EditError::Truncated(_)),
            "truncated ELF file",
        );
    }
}

#[test]
fn thirty_two_bit() {
    assert_rejected(
        &fixture("i386.so"),
        |e| matches!(e, EditError::Not64Bit),
        "32-bit",
    );
    // A real 32-bit file of the system too (Debian's libc6-i386, which the
    // build root has).
    let ld32 = Path::new("/usr/lib32/ld-linux.so.2");
    assert!(
        ld32.exists(),
        "{} not found: install libc6-i386, or run the tests inside the build root: \
         scripts/buildroot cargo test --manifest-path tools/Cargo.toml --locked --workspace",
        ld32.display()
    );
    assert_rejected(ld32, |e| matches!(e, EditError::Not64Bit), "32-bit");
}

#[test]
fn big_endian() {
    assert_rejected(
        &fixture("ppc64-big-endian.so"),
        |e| matches!(e, EditError::BigEndian),
        "big-endian",
    );
}

#[test]
fn not_x86_64() {
    assert_rejected(
        &fixture("aarch64.so"),
        |e| matches!(e, EditError::WrongMachine(183, _)),
        "AARCH64",
    );
}

#[test]
fn static_executable_and_object_file() {
    let d = tempdir();
    std::fs::write(d.path().join("s.c"), "int main(void) { return 0; }\n").unwrap();
    let exe = d.path().join("static");
    run(Command::new("gcc")
        .arg("-static")
        .arg(d.path().join("s.c"))
        .arg("-o")
        .arg(&exe));
    assert_rejected(
        &exe,
        |e| matches!(e, EditError::NoDynamic),
        "statically linked",
    );
    let obj = d.path().join("s.o");
    run(Command::new("gcc")
        .arg("-c")
        .arg(d.path().join("s.c"))
        .arg("-o")
        .arg(&obj));
    assert_rejected(&obj, |e| matches!(e, EditError::WrongType(1)), "(REL)");
}

/// glibc's static-pie start-up code relocates itself through the link-time
/// address of its dynamic section: an edited copy would crash, so edits are
/// refused (show still works).
#[test]
fn static_pie_is_refused() {
    let d = tempdir();
    std::fs::write(
        d.path().join("s.c"),
        "#include <stdio.h>\nint main(void) { puts(\"static-pie\"); return 0; }\n",
    )
    .unwrap();
    let exe = d.path().join("static-pie");
    run(Command::new("gcc")
        .arg("-static-pie")
        .arg(d.path().join("s.c"))
        .arg("-o")
        .arg(&exe));
    let before = std::fs::read(&exe).unwrap();
    let out = d.path().join("out");
    for edit in [
        set("$ORIGIN/../lib", RpathKind::Runpath),
        elf_edit::Edit::Remove,
    ] {
        for target in [Some(out.as_path()), None] {
            let err = elf_edit::edit_file(&exe, target, &edit).unwrap_err();
            assert!(
                matches!(err.downcast_ref::<EditError>(), Some(EditError::StaticPie)),
                "{err:#}"
            );
            assert!(
                format!("{err:#}").contains("static-pie executable"),
                "{err:#}"
            );
            assert_eq!(std::fs::read(&exe).unwrap(), before);
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
        }
    }
    assert!(elf_edit::read_rpath(&exe).unwrap().is_empty());
    assert_eq!(run_stdout(&mut Command::new(&exe)), "static-pie\n");
}

#[test]
fn unplaceable_string() {
    let d = tempdir();
    let lib = copy_in(&fixture("tiny-runpath.so"), d.path(), "input");
    let before = std::fs::read(&lib).unwrap();
    let edit = elf_edit::Edit::Set {
        rpath: b"$ORIGIN\0/lib".to_vec(),
        kind: RpathKind::Runpath,
    };
    let err = elf_edit::edit_file(&lib, None, &edit).unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<EditError>(),
            Some(EditError::CannotPlace(_))
        ),
        "{err:#}"
    );
    assert!(format!("{err:#}").contains("NUL"));
    assert_eq!(std::fs::read(&lib).unwrap(), before);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    for (rpath, what) in [(&b"$ORIGIN\n/x"[..], "a newline"), (b"/a\x7f", "0x7f")] {
        let edit = elf_edit::Edit::Set {
            rpath: rpath.to_vec(),
            kind: RpathKind::Runpath,
        };
        let err = elf_edit::edit_file(&lib, None, &edit).unwrap_err();
        assert!(format!("{err:#}").contains(what), "{err:#}");
        assert_eq!(std::fs::read(&lib).unwrap(), before);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}

#[test]
fn unwritable_destination_leaves_nothing() {
    let d = tempdir();
    let lib = copy_in(&fixture("tiny-none.so"), d.path(), "input");
    let before = std::fs::read(&lib).unwrap();
    let missing = d.path().join("no/such/dir/out.so");
    let err =
        elf_edit::edit_file(&lib, Some(&missing), &set("$ORIGIN", RpathKind::Runpath)).unwrap_err();
    assert!(format!("{err:#}").contains("temporary file"), "{err:#}");
    assert_eq!(std::fs::read(&lib).unwrap(), before);
}

/// The glibc floor moves no byte and reads only version tables: it takes
/// aarch64 files too (the tool's arm64 wheel), which the rpath edits refuse.
#[test]
fn glibc_floor_takes_aarch64() {
    let d = tempdir();
    let out = d.path().join("aarch64.so");
    let report = elf_edit::lower_glibc_floor(&fixture("aarch64.so"), &out, (2, 17))
        .expect("an aarch64 library's glibc floor");
    assert!(report.unversioned.is_empty(), "{report:?}");
    assert!(out.exists());
}
