//! Runs the fuzz body over the committed seed corpus, plus cheap mutations
//! of it (truncations and single-byte flips in the headers), in a normal
//! test so regressions show up without cargo-fuzz.

mod common;

#[test]
fn fuzz_body_over_corpus() {
    let dir = test_support::manifest_dir().join("fuzz/corpus/set_rpath");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        elf_edit::fuzz_one(&data);
        for len in (0..data.len()).step_by(97) {
            elf_edit::fuzz_one(&data[..len]);
        }
        // Every byte of the ELF header and the first program headers,
        // then a sample of the rest (more headers, dynamic, section headers).
        let positions = (0..data.len().min(256)).chain((256..data.len()).step_by(11));
        for i in positions {
            let mut m = data.clone();
            m[i] ^= 0xff;
            elf_edit::fuzz_one(&m);
        }
        n += 1;
    }
    assert!(n >= 4, "corpus at {} is missing files", dir.display());
}

#[test]
fn corpus_edits_succeed() {
    // The seeds are valid x86-64 objects: the fuzz body must take the
    // editing path on them, not just the error path.
    let dir = test_support::manifest_dir().join("fuzz/corpus/set_rpath");
    for name in [
        "tiny-none.so",
        "tiny-runpath.so",
        "tiny-rpath.so",
        "tiny-lld.so",
        "tiny-exe.so",
        "tiny-exe-nosections.so",
    ] {
        let data = std::fs::read(dir.join(name)).unwrap();
        let edit = elf_edit::Edit::Set {
            rpath: b"$ORIGIN/../a/much/longer/rpath/than/before".to_vec(),
            kind: elf_edit::RpathKind::Runpath,
        };
        let (out, method) = elf_edit::edit_bytes(&data, &edit).unwrap();
        assert!(
            matches!(method, elf_edit::Method::Appended { .. }),
            "{name}: {method:?}"
        );
        assert_eq!(
            elf_edit::read_rpath_bytes(&out).unwrap()[0].value,
            b"$ORIGIN/../a/much/longer/rpath/than/before"
        );
    }
}

/// The fuzz crate's own lock file lists this crate's dependencies as they are.
#[test]
fn fuzz_lock_file_is_current() {
    common::assert_fuzz_lock_file_current(&test_support::manifest_dir());
}
