//! The writer's archives read back by Python's zipfile (the reader pip
//! uses) and by the zip crate: the ZIP64 layout and more than 65535 entries.

use std::path::Path;
use std::process::Command;
use test_support::{run_stdout, venv_bin};

/// Reads a zip with Python's zipfile and checks every entry's bytes.
fn python_reads(zip: &Path, expect: &[(String, Vec<u8>)]) {
    let listing = tempfile::NamedTempFile::new().unwrap();
    let mut text = String::new();
    for (name, data) in expect {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!("{name}\t{hex}\n"));
    }
    std::fs::write(listing.path(), text).unwrap();
    let py = r#"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
assert [i.filename for i in z.infolist()] == [n for n, _ in want]
for n, h in want:
    assert z.read(n) == bytes.fromhex(h), n
print("ok", len(want))
"#;
    let out = run_stdout(
        Command::new(venv_bin("python"))
            .args(["-c", py])
            .arg(zip)
            .arg(listing.path()),
    );
    assert!(out.starts_with("ok"), "{out}");
}

#[test]
fn zip64_layout_is_read_by_python_and_the_zip_crate() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("z64.zip");
    let entries: Vec<(String, Vec<u8>)> = (0..5)
        .map(|i| {
            (
                format!("dir/f{i}.txt"),
                format!("entry {i} ").repeat(i * 100).into_bytes(),
            )
        })
        .collect();
    for level in [0, 6] {
        let f = std::fs::File::create(&path).unwrap();
        let mut z = crate::ParallelZipWriter::new(f, None, level);
        z.force_zip64();
        for (n, d) in &entries {
            z.add_bytes(n, d, 0o644).unwrap();
        }
        z.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        let has = |sig: &[u8]| raw.windows(sig.len()).any(|w| w == sig);
        // ZIP64 end record and locator, and a ZIP64 extra (id 1, 16 bytes) in a local header.
        assert!(has(b"PK\x06\x06") && has(b"PK\x06\x07") && has(b"\x01\x00\x10\x00"));
        python_reads(&path, &entries);
        let mut a = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        for (n, d) in &entries {
            let mut back = Vec::new();
            std::io::Read::read_to_end(&mut a.by_name(n).unwrap(), &mut back).unwrap();
            assert_eq!(&back, d, "{n}");
        }
    }
}

#[test]
fn more_than_65535_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("many.zip");
    let entries: Vec<(String, Vec<u8>)> = (0..70_000)
        .map(|i| (format!("m/{i:05}"), vec![(i % 251) as u8]))
        .collect();
    let mut z = crate::ParallelZipWriter::new(std::fs::File::create(&path).unwrap(), None, 0);
    for (n, d) in &entries {
        z.add_bytes(n, d, 0o644).unwrap();
    }
    z.finish().unwrap();
    let raw = std::fs::read(&path).unwrap();
    assert!(
        raw.windows(4).any(|w| w == b"PK\x06\x06"),
        "no ZIP64 end record"
    );
    python_reads(&path, &entries);
    assert_eq!(
        zip::ZipArchive::new(std::fs::File::open(&path).unwrap())
            .unwrap()
            .len(),
        70_000
    );
}
