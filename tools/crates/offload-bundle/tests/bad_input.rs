//! Bad input gives clear errors, never panics, and never leaves output files.

use std::path::PathBuf;

use offload_bundle::{
    build_uncompressed, compress, read_bundle, read_bundles, write_bundle_file, Compression,
    Limits, Method, WriteRequest,
};
use test_support::*;

fn err_of<T: std::fmt::Debug>(r: anyhow::Result<T>) -> String {
    format!("{:#}", r.expect_err("expected an error"))
}

/// A small real bundle: gfx906 + gfx90a code objects from clang 21.
fn real_bundle() -> Vec<u8> {
    let f = fixtures();
    let a = std::fs::read(f.code_object("gfx906")).unwrap();
    let b = std::fs::read(f.code_object("gfx90a")).unwrap();
    build_uncompressed(HOST, &[(device_id("gfx906"), a), (device_id("gfx90a"), b)]).unwrap()
}

#[test]
fn every_truncation_is_an_error() {
    let full = real_bundle();
    let z = compress(&full, Method::Zstd, 2, None).unwrap();
    let zl = compress(&full, Method::Zlib, 3, None).unwrap();
    for data in [&full, &z, &zl] {
        // Every header-sized prefix, then coarser steps through the data.
        let cuts = (0..300).chain((300..data.len()).step_by(97));
        for n in cuts {
            let r = read_bundle(&data[..n], &Limits::default());
            assert!(r.is_err(), "prefix of {n} bytes was accepted");
        }
        read_bundle(data, &Limits::default()).unwrap();
    }
    let e = err_of(read_bundle(&full[..full.len() - 1], &Limits::default()));
    assert!(e.contains("truncated"), "{e}");
    let e = err_of(read_bundle(&z[..z.len() - 10], &Limits::default()));
    assert!(e.contains("truncated compressed bundle"), "{e}");
}

#[test]
fn wrong_magic() {
    let mut data = real_bundle();
    data[2] = b'X';
    let e = err_of(read_bundle(&data, &Limits::default()));
    assert!(
        e.contains("not an offload bundle") && e.contains("__CLANG_OFFLOAD_BUNDLE__"),
        "{e}"
    );
    let e = err_of(read_bundle(b"\x7fELF\x02\x01\x01\0", &Limits::default()));
    assert!(e.contains("7f 45 4c 46"), "{e}");
}

#[test]
fn entry_count_overflow() {
    let mut data = real_bundle();
    for count in [u64::MAX, 1 << 40, 1000] {
        data[24..32].copy_from_slice(&count.to_le_bytes());
        let e = err_of(read_bundle(&data, &Limits::default()));
        assert!(
            e.contains(&format!("entry count {count} cannot fit")),
            "{e}"
        );
    }
}

#[test]
fn entry_fields_out_of_range() {
    let base = real_bundle();
    // First entry (host): offset at 32, size at 40, id length at 48.
    let mut d = base.clone();
    d[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("spans bytes"), "{e}");
    let mut d = base.clone();
    d[32..40].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
    d[40..48].copy_from_slice(&8u64.to_le_bytes());
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("spans bytes"), "{e}");
    let mut d = base.clone();
    d[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("id length"), "{e}");
    // Data overlapping the header.
    let mut d = base;
    d[40..48].copy_from_slice(&16u64.to_le_bytes());
    d[32..40].copy_from_slice(&8u64.to_le_bytes());
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("overlaps the header"), "{e}");
}

#[test]
fn corrupt_compressed_bundles() {
    let full = real_bundle();
    let z = compress(&full, Method::Zstd, 2, None).unwrap();
    // Corrupt stream bytes.
    let mut d = z.clone();
    let mid = 24 + (d.len() - 24) / 2;
    for b in &mut d[mid..mid + 16] {
        *b ^= 0x5a;
    }
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("corrupt compressed bundle"), "{e}");
    // Wrong hash.
    let mut d = z.clone();
    d[16] ^= 1;
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("does not match the header's hash"), "{e}");
    // Wrong uncompressed size.
    let mut d = z.clone();
    d[12..16].copy_from_slice(&((full.len() as u32) + 1).to_le_bytes());
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(e.contains("header announces"), "{e}");
    // Announcing fewer bytes than the stream holds: the output buffer is
    // sized from the header, so the stream does not fit.
    for m in [Method::Zstd, Method::Zlib] {
        let mut d = compress(&full, m, 2, None).unwrap();
        d[12..16].copy_from_slice(&((full.len() as u32) - 1).to_le_bytes());
        let e = err_of(read_bundle(&d, &Limits::default()));
        assert!(
            e.contains(&format!("gives more than {}", full.len() - 1)),
            "{m:?}: {e}"
        );
    }
    // Unknown method and version.
    let mut d = z.clone();
    d[6] = 7;
    assert!(err_of(read_bundle(&d, &Limits::default())).contains("unknown compression method 7"));
    let mut d = z.clone();
    d[4] = 9;
    assert!(err_of(read_bundle(&d, &Limits::default())).contains("version 9"));
    // Total size smaller than the header.
    let mut d = z.clone();
    d[8..12].copy_from_slice(&3u32.to_le_bytes());
    assert!(err_of(read_bundle(&d, &Limits::default())).contains("smaller than"));
    // An announced size above the limit is refused before decompressing.
    let e = err_of(read_bundle(
        &z,
        &Limits {
            max_uncompressed: 1024,
        },
    ));
    assert!(e.contains("more than the limit"), "{e}");
    // A compressed stream that is not a bundle.
    let mut fake = b"not a bundle".to_vec();
    fake.resize(64, 0);
    let mut d = compress(&full, Method::Zlib, 2, None).unwrap();
    let stream = {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&fake).unwrap();
        e.finish().unwrap()
    };
    d.truncate(24);
    d[8..12].copy_from_slice(&((24 + stream.len()) as u32).to_le_bytes());
    d[12..16].copy_from_slice(&(fake.len() as u32).to_le_bytes());
    use md5::Digest;
    d[16..24].copy_from_slice(&md5::Md5::digest(&fake)[..8]);
    d.extend_from_slice(&stream);
    let e = err_of(read_bundle(&d, &Limits::default()));
    assert!(
        e.contains("does not decompress to an offload bundle"),
        "{e}"
    );
}

#[test]
fn garbage_between_bundles() {
    let full = real_bundle();
    let mut s = full.clone();
    s.resize(s.len().div_ceil(4096) * 4096, 0);
    s.extend_from_slice(b"garbage!");
    let e = err_of(read_bundles(&s, &Limits::default()));
    assert!(
        e.contains("bundle #1") && e.contains("not an offload bundle"),
        "{e}"
    );
    let e = err_of(read_bundle(&s, &Limits::default()));
    assert!(e.contains("after the bundle"), "{e}");
}

fn request(out: PathBuf, entries: Vec<(String, PathBuf)>) -> WriteRequest {
    WriteRequest {
        output: out,
        host_triple: HOST.into(),
        entries,
        compression: Compression::Compressed {
            method: Method::Zstd,
            version: 2,
            level: None,
        },
    }
}

#[test]
fn non_amdgpu_code_object_is_refused() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hipfb");
    // A host (x86-64) object file.
    let host_obj = dir.path().join("host.o");
    let src = dir.path().join("host.c");
    std::fs::write(&src, "int answer(void) { return 42; }\n").unwrap();
    run(llvm_cmd("clang")
        .args(["-x", "c", "-c", "-o"])
        .arg(&host_obj)
        .arg(&src));
    std::fs::remove_file(&src).unwrap();
    let good = f.code_object("gfx90a");
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![
            (device_id("gfx90a"), good.clone()),
            (device_id("gfx906"), host_obj.clone()),
        ],
    )));
    assert!(
        e.contains(&host_obj.display().to_string()) && e.contains("EM_AMDGPU"),
        "{e}"
    );
    // Not ELF at all.
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![(device_id("gfx90a"), f.path("k.hip"))],
    )));
    assert!(e.contains("k.hip") && e.contains("not an ELF file"), "{e}");
    // An AMDGPU object that was never linked (clang -cc1 -emit-obj output).
    f.bare_code_object("gfx1200");
    let obj = f.path("b.gfx1200.o");
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![(device_id("gfx1200"), obj.clone())],
    )));
    assert!(
        e.contains("b.gfx1200.o is an unlinked AMDGPU object"),
        "{e}"
    );
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary files left behind"
    );
}

#[test]
fn target_mismatch_names_both() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hipfb");
    let co906 = f.code_object("gfx906");
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![(device_id("gfx90a"), co906.clone())],
    )));
    assert!(
        e.contains("is a gfx906 code object") && e.contains("names gfx90a"),
        "{e}"
    );
    // Feature mismatch: clang 21 builds gfx906 with xnack "any" unless told.
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![(device_id("gfx906:xnack+"), co906.clone())],
    )));
    assert!(e.contains("xnack any") && e.contains("xnack on"), "{e}");
    // Duplicate and malformed entries.
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![
            (device_id("gfx906"), co906.clone()),
            (device_id("gfx906"), co906),
        ],
    )));
    assert!(e.contains("given twice"), "{e}");
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![("hipv4-amdgcn-amd-amdhsa--gfx9999".into(), f.path("k.hip"))],
    )));
    assert!(e.contains("unknown GPU processor `gfx9999`"), "{e}");
    assert!(!out.exists());
}

#[test]
fn failed_write_keeps_an_existing_output() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hipfb");
    std::fs::write(&out, b"previous").unwrap();
    let co906 = f.code_object("gfx906");
    assert!(write_bundle_file(&request(out.clone(), vec![(device_id("gfx90a"), co906)])).is_err());
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
}

/// A code object cut short anywhere is refused as truncated, naming what is
/// cut off; the whole file (from the HIP driver, and from `clang -cc1` +
/// `ld.lld` for a processor without device libraries) is accepted. `readelf` is the oracle for where the tables lie.
#[test]
fn truncated_code_objects_are_refused() {
    let f = fixtures();
    for (id, co) in [
        (device_id("gfx906"), f.code_object("gfx906")),
        (device_id("gfx1250"), f.bare_code_object("gfx1250")),
    ] {
        let data = std::fs::read(&co).unwrap();
        offload_bundle::check_code_object(&id, &data, "co").unwrap();
        for cut in 6..data.len() {
            let e = err_of(offload_bundle::check_code_object(&id, &data[..cut], "co"));
            assert!(e.starts_with("co: truncated ELF: "), "cut {cut}: {e}");
        }
        // Where readelf puts the section header table, we say it is cut.
        let out = run(std::process::Command::new(binutils("readelf"))
            .arg("-h")
            .arg(&co));
        let text = String::from_utf8(out.stdout).unwrap();
        let shoff: usize = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Start of section headers:"))
            .and_then(|v| v.split_whitespace().next())
            .unwrap()
            .parse()
            .unwrap();
        let e = err_of(offload_bundle::check_code_object(
            &id,
            &data[..shoff + 1],
            "co",
        ));
        assert!(e.contains("the section header table"), "{e}");
        let e = err_of(offload_bundle::check_code_object(&id, &data[..60], "co"));
        assert!(e.contains("shorter than the 64-byte ELF64 header"), "{e}");
    }

    // Intact tables, but a segment and a section claiming bytes past the
    // end (e.g. a file whose tail was overwritten by a bad patch).
    let data = std::fs::read(f.code_object("gfx906")).unwrap();
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let phoff = u64_at(&data, 32) as usize;
    let mut seg = data.clone();
    seg[phoff + 32..phoff + 40].copy_from_slice(&(data.len() as u64 + 1).to_le_bytes());
    let e = err_of(offload_bundle::check_code_object(
        &device_id("gfx906"),
        &seg,
        "co",
    ));
    assert!(e.contains("truncated ELF: segment 0"), "{e}");
    let shoff = u64_at(&data, 40) as usize;
    let shentsize = u16::from_le_bytes([data[58], data[59]]) as usize;
    let shstrndx = u16::from_le_bytes([data[62], data[63]]) as usize;
    let mut sec = data.clone();
    let o = shoff + shstrndx * shentsize + 24;
    sec[o..o + 8].copy_from_slice(&(data.len() as u64).to_le_bytes());
    let e = err_of(offload_bundle::check_code_object(
        &device_id("gfx906"),
        &sec,
        "co",
    ));
    assert!(
        e.contains(&format!("truncated ELF: section {shstrndx}")),
        "{e}"
    );

    // Through the writer: nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let half = dir.path().join("half.co");
    std::fs::write(&half, &data[..data.len() / 2]).unwrap();
    let out = dir.path().join("out.hipfb");
    let e = err_of(write_bundle_file(&request(
        out.clone(),
        vec![(device_id("gfx906"), half.clone())],
    )));
    assert!(
        e.contains(&format!("{}: truncated ELF", half.display())),
        "{e}"
    );
    assert!(!out.exists());
}

/// Two entries for one target make the bundle ambiguous, however the ids
/// are spelled; nothing is written.
#[test]
fn duplicate_targets_are_refused() {
    let d = tempdir();
    let dir = d.path();
    // gfx90a with xnack on and sramecc off (e_flags at 48).
    let mut co = std::fs::read(code_object("gfx90a")).unwrap();
    let flags = u32::from_le_bytes(co[48..52].try_into().unwrap()) & 0xff;
    co[48..52].copy_from_slice(&(flags | 3 << 8 | 2 << 10).to_le_bytes());
    let xs = dir.join("k.xs.co");
    std::fs::write(&xs, co).unwrap();
    let id = device_id("gfx90a");
    let cases: &[(&[String], &str)] = &[
        (
            &[
                format!("{id}:xnack+:sramecc-"),
                format!("{id}:sramecc-:xnack+"),
            ],
            "entry ids `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-` and \
             `hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+` name the same target",
        ),
        (
            &[format!("{id}:xnack+:xnack-")],
            "target feature xnack is given twice",
        ),
    ];
    let out = dir.join("out.hipfb");
    let before = snapshot(dir);
    for (ids, needle) in cases {
        for compression in [
            Compression::None,
            Compression::Compressed {
                method: Method::Zstd,
                version: 2,
                level: None,
            },
        ] {
            let e = err_of(write_bundle_file(&WriteRequest {
                output: out.clone(),
                host_triple: HOST.into(),
                entries: ids.iter().map(|i| (i.clone(), xs.clone())).collect(),
                compression,
            }));
            assert!(e.contains(needle), "{needle:?} not in: {e}");
            assert_unchanged(dir, &before);
        }
    }
    // One of them alone is fine.
    write_bundle_file(&request(out, vec![(format!("{id}:sramecc-:xnack+"), xs)])).unwrap();
}
