//! The rewriter on small wheels made with parallel-zip's writer: edits,
//! the rows of RECORD, renaming and retagging, the reused deflate stream of
//! an edited member, and no output after a failure.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use parallel_zip::ParallelZipWriter;
use sha2::{Digest, Sha256};
use wheel_format::{record_hash, RecordWriter};
use wheel_rewrite::{Source, WheelRewriter};

const DIST: &str = "demo-1.0.dist-info";

/// A wheel with two modules, a data file and RECORD rows as `rows`
/// gives them (a needlessly quoted row included).
fn wheel(dir: &Path, record_rows: Option<&str>) -> PathBuf {
    let p = dir.join("demo-1.0-py3-none-any.whl");
    let mut w = ParallelZipWriter::new(File::create(&p).unwrap(), Some(1_700_000_000), 6);
    let mut rec = RecordWriter::new();
    let files: [(&str, &[u8]); 5] = [
        ("demo/a.py", b"A = 1\n"),
        ("demo/b.py", b"B = 2\n"),
        ("demo/data.bin", &[7u8; 5000]),
        (
            "demo-1.0.dist-info/METADATA",
            b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nbody\n",
        ),
        (
            "demo-1.0.dist-info/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
    ];
    for (n, b) in files {
        let mode = if n.ends_with(".bin") { 0o755 } else { 0o644 };
        let x = w.add_bytes(n, b, mode).unwrap();
        rec.hashed(n, &record_hash(&x.sha256), x.size);
    }
    rec.unhashed(&format!("{DIST}/RECORD"));
    let text = rec.finish().replace("demo/b.py,", "\"demo/b.py\",");
    let text = record_rows.unwrap_or(&text);
    w.add_bytes(&format!("{DIST}/RECORD"), text.as_bytes(), 0o644)
        .unwrap();
    w.finish().unwrap();
    p
}

fn read(p: &Path) -> zip::ZipArchive<File> {
    zip::ZipArchive::new(File::open(p).unwrap()).unwrap()
}

fn text(z: &mut zip::ZipArchive<File>, n: &str) -> String {
    let mut s = String::new();
    z.by_name(n).unwrap().read_to_string(&mut s).unwrap();
    s
}

fn raw(z: &mut zip::ZipArchive<File>, n: &str) -> Vec<u8> {
    let mut v = Vec::new();
    let i = z.index_for_name(n).unwrap();
    z.by_index_raw(i).unwrap().read_to_end(&mut v).unwrap();
    v
}

#[test]
fn replace_add_remove_keep_the_other_members_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    let input = wheel(dir.path(), None);
    let mut rw = WheelRewriter::open(&input).unwrap();
    rw.set_jobs(2);
    rw.replace("demo/a.py", Source::Bytes(b"A = 3\n".to_vec()))
        .unwrap();
    rw.remove("demo/b.py").unwrap();
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(b"new\n").unwrap();
    rw.add("demo/new.txt", Source::File(f), 0o600).unwrap();
    assert!(rw
        .add("demo/data.bin", Source::Bytes(vec![]), 0o644)
        .is_err());
    assert!(rw.remove(&format!("{DIST}/RECORD")).is_err());
    assert!(rw.replace("nope", Source::Bytes(vec![])).is_err());
    let out = dir.path().join("out/demo-1.0-py3-none-any.whl");
    std::fs::create_dir(dir.path().join("out")).unwrap();
    assert_eq!(rw.output_file_name().unwrap(), "demo-1.0-py3-none-any.whl");
    rw.finish(&out).unwrap();

    let (mut a, mut b) = (read(&input), read(&out));
    let names: Vec<&str> = b.file_names().collect();
    assert_eq!(names.len(), 6);
    assert_eq!(text(&mut b, "demo/a.py"), "A = 3\n");
    assert_eq!(text(&mut b, "demo/new.txt"), "new\n");
    assert!(b.by_name("demo/b.py").is_err());
    // Unchanged members: the same compressed bytes, time and mode.
    assert_eq!(raw(&mut a, "demo/data.bin"), raw(&mut b, "demo/data.bin"));
    let (x, y) = (
        a.by_name("demo/data.bin").unwrap(),
        b.by_name("demo/data.bin").unwrap(),
    );
    assert_eq!(x.last_modified(), y.last_modified());
    assert_eq!(y.unix_mode(), Some(0o100755));
    drop((x, y));
    assert_eq!(
        b.by_name("demo/new.txt").unwrap().unix_mode(),
        Some(0o100600)
    );
    let record = text(&mut b, &format!("{DIST}/RECORD"));
    let old = text(&mut a, &format!("{DIST}/RECORD"));
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "demo/a.py,{},6",
            record_hash(&<[u8; 32]>::from(<sha2::Sha256 as sha2::Digest>::digest(
                b"A = 3\n"
            )))
        )
    );
    for kept in [1, 2, 3] {
        assert!(old.lines().any(|l| l == lines[kept]), "{}", lines[kept]);
    }
    assert!(lines[4].starts_with("demo/new.txt,sha256="), "{record}");
    assert_eq!(lines[5], format!("{DIST}/RECORD,,"));
    assert!(!record.contains("b.py"));
    // Unpacking: only members that start with the magic.
    let mut rw = WheelRewriter::open(&out).unwrap();
    let i = rw
        .names()
        .iter()
        .position(|n| n == "demo/data.bin")
        .unwrap();
    let before = test_support::file_names(dir.path());
    let mut f = rw.unpack_if(i, &[7, 7], dir.path()).unwrap().unwrap();
    // Unnamed: a run killed now leaves nothing in the directory.
    assert_eq!(test_support::file_names(dir.path()), before);
    let mut v = Vec::new();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.read_to_end(&mut v).unwrap();
    assert_eq!(v, [7u8; 5000]);
    assert!(rw.unpack_if(i, b"\x7fELF", dir.path()).unwrap().is_none());
    // The last member is RECORD.
    assert_eq!(b.by_index(5).unwrap().name(), format!("{DIST}/RECORD"));
}

#[test]
fn an_unpacked_member_edited_in_place_reuses_its_stream_around_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("demo-1.0-py3-none-any.whl");
    let lib = test_support::sample(3 << 20);
    {
        // One zlib stream for the library, as another tool writes it.
        let mut w = ParallelZipWriter::new(File::create(&input).unwrap(), None, 6);
        let mut rec = RecordWriter::new();
        let meta: &[u8] = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n";
        let wheel: &[u8] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n";
        for (n, b) in [
            ("demo/lib.so", &lib[..]),
            ("demo-1.0.dist-info/METADATA", meta),
            ("demo-1.0.dist-info/WHEEL", wheel),
        ] {
            let x = w.add_bytes(n, b, 0o755).unwrap();
            rec.hashed(n, &record_hash(&x.sha256), x.size);
        }
        rec.unhashed(&format!("{DIST}/RECORD"));
        w.add_bytes(&format!("{DIST}/RECORD"), rec.finish().as_bytes(), 0o644)
            .unwrap();
        w.finish().unwrap();
    }
    let mut rw = WheelRewriter::open(&input).unwrap();
    let mut f = rw.unpack_if(0, &lib[..4], dir.path()).unwrap().unwrap();
    let edit = 1_500_000..1_500_100u64;
    let mut new = lib.clone();
    new[edit.start as usize..edit.end as usize].fill(0);
    f.seek(SeekFrom::Start(edit.start)).unwrap();
    f.write_all(&new[edit.start as usize..edit.end as usize])
        .unwrap();
    rw.replace_unpacked("demo/lib.so", f, edit).unwrap();
    let out = dir.path().join("out").join("demo-1.0-py3-none-any.whl");
    std::fs::create_dir(out.parent().unwrap()).unwrap();
    rw.finish(&out).unwrap();
    let mut z = read(&out);
    let mut back = Vec::new();
    z.by_name("demo/lib.so")
        .unwrap()
        .read_to_end(&mut back)
        .unwrap();
    assert!(back == new, "the edited member differs");
    assert_eq!(
        z.by_name("demo/lib.so").unwrap().unix_mode(),
        Some(0o100755)
    );
    let row = format!(
        "demo/lib.so,{},{}",
        record_hash(&<[u8; 32]>::from(Sha256::digest(&new))),
        new.len()
    );
    assert!(text(&mut z, &format!("{DIST}/RECORD")).contains(&row));
    // The stream before the edit is the input's, byte for byte.
    let (old, now) = (
        raw(&mut read(&input), "demo/lib.so"),
        raw(&mut z, "demo/lib.so"),
    );
    let same = old.iter().zip(&now).take_while(|(a, b)| a == b).count();
    assert!(same > 300_000, "only {same} bytes of the old stream reused");
}

#[test]
fn rename_and_retag() {
    let dir = tempfile::tempdir().unwrap();
    let input = wheel(dir.path(), None);
    let mut rw = WheelRewriter::open(&input).unwrap();
    rw.rename("Demo.GPU").unwrap();
    rw.retag(&["py3-none-manylinux_2_28_x86_64".to_string()])
        .unwrap();
    assert!(rw.rename("bad name!").is_err());
    let name = rw.output_file_name().unwrap();
    assert_eq!(name, "demo_gpu-1.0-py3-none-manylinux_2_28_x86_64.whl");
    let out = dir.path().join(&name);
    rw.finish(&out).unwrap();
    let mut b = read(&out);
    let d = "demo_gpu-1.0.dist-info";
    assert!(text(&mut b, &format!("{d}/METADATA")).contains("\nName: Demo.GPU\n"));
    let wheel = text(&mut b, &format!("{d}/WHEEL"));
    assert!(
        wheel.ends_with("Tag: py3-none-manylinux_2_28_x86_64\n"),
        "{wheel}"
    );
    let record = text(&mut b, &format!("{d}/RECORD"));
    assert!(record.contains(&format!("{d}/WHEEL,sha256=")), "{record}");
    assert!(!record.contains(DIST), "{record}");
    // What `wheel` and pip check: every member hashed as RECORD says.
    let mut rec = wheel_format::Record::parse(&format!("{d}/RECORD"), &record).unwrap();
    for i in 0..b.len() {
        let mut m = b.by_index(i).unwrap();
        let n = m.name().to_string();
        let mut v = Vec::new();
        m.read_to_end(&mut v).unwrap();
        if let Some(e) = rec.expect(&n).unwrap() {
            e.verify(&wheel_format::Digest::of(&v)).unwrap();
        }
    }
    rec.finish().unwrap();
}

#[test]
fn a_failed_finish_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    // RECORD does not list demo/a.py, which is replaced: refused.
    let input = wheel(dir.path(), Some("demo/b.py,sha256=x,1\n"));
    let mut rw = WheelRewriter::open(&input).unwrap();
    rw.replace("demo/a.py", Source::Bytes(b"x".to_vec()))
        .unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let out = dir.path().join("out/demo-1.0-py3-none-any.whl");
    let e = format!("{:#}", rw.finish(&out).unwrap_err());
    assert!(e.contains("does not list every member"), "{e}");
    assert_eq!(
        std::fs::read_dir(dir.path().join("out")).unwrap().count(),
        0
    );
}

#[test]
fn a_dist_info_file_is_added_and_follows_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let input = wheel(dir.path(), None);
    let mut rw = WheelRewriter::open(&input).unwrap();
    rw.add_dist_info("variant.json", Source::Bytes(b"{}\n".to_vec()))
        .unwrap();
    for taken in ["variant.json", "METADATA", "RECORD", "WHEEL", "sub/x"] {
        let e = rw
            .add_dist_info(taken, Source::Bytes(vec![]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot add"), "{taken}: {e}");
    }
    rw.rename("demo-x").unwrap();
    let out = dir.path().join("demo_x-1.0-py3-none-any.whl");
    rw.finish(&out).unwrap();
    let mut b = read(&out);
    assert_eq!(text(&mut b, "demo_x-1.0.dist-info/variant.json"), "{}\n");
    let record = text(&mut b, "demo_x-1.0.dist-info/RECORD");
    assert!(
        record.contains("demo_x-1.0.dist-info/variant.json,sha256="),
        "{record}"
    );
}
