//! Runs the fuzz target's body over the committed seed corpus
//! (`fuzz/corpus/read_bundle`). Seeds named `ok-*` must read and list the
//! targets in their name; seeds named `bad-*` must be rejected.

use std::path::{Path, PathBuf};

use offload_bundle::{build_uncompressed, compress, fuzz_read, Method};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/read_bundle")
}

#[test]
fn fuzz_body_over_corpus() {
    let mut seen = 0;
    for e in std::fs::read_dir(corpus_dir()).expect("seed corpus") {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let data = std::fs::read(&path).unwrap();
        // Never panics, whatever the file (the fuzzer may have added some).
        let r = fuzz_read(&data);
        if let Some(rest) = name.strip_prefix("ok-") {
            let targets = r.unwrap_or_else(|e| panic!("{name}: {e:#}"));
            // ok-<what>-<gfx>+<gfx>.bin
            let want = rest.trim_end_matches(".bin").rsplit('-').next().unwrap();
            assert_eq!(targets.join("+"), want, "{name}");
            seen += 1;
        } else if name.starts_with("bad-") {
            assert!(r.is_err(), "{name} was accepted");
            seen += 1;
        }
    }
    assert!(seen >= 8, "seed corpus is missing files ({seen} seeds)");
}

/// A small hand-laid bundle (no alignment padding) so seeds stay tiny.
fn compact(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut hdr = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    hdr.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let hdr_len = hdr.len() + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut off = hdr_len;
    let mut body = Vec::new();
    for (id, data) in entries {
        hdr.extend_from_slice(&(off as u64).to_le_bytes());
        hdr.extend_from_slice(&(data.len() as u64).to_le_bytes());
        hdr.extend_from_slice(&(id.len() as u64).to_le_bytes());
        hdr.extend_from_slice(id.as_bytes());
        body.extend_from_slice(data);
        off += data.len();
    }
    hdr.extend_from_slice(&body);
    hdr
}

/// Regenerates the seeds: `cargo test -p offload-bundle --test fuzz_corpus -- --ignored`.
#[test]
#[ignore]
fn regenerate_seed_corpus() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let elf = |mach: u8| {
        let mut e = vec![0u8; 64];
        e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
        e[18] = 224;
        e[48] = mach;
        e
    };
    let (a, b) = (elf(0x2f), elf(0x3f));
    let two = compact(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx906", &a),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", &b),
    ]);
    let one = compact(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx1200", &a),
    ]);
    let w = |name: &str, data: &[u8]| std::fs::write(dir.join(name), data).unwrap();
    w("ok-plain-gfx906+gfx90a.bin", &two);
    w(
        "ok-aligned-gfx1200.bin",
        &build_uncompressed(
            "x86_64-unknown-linux-gnu",
            &[("hipv4-amdgcn-amd-amdhsa--gfx1200".into(), a.clone())],
        )
        .unwrap(),
    );
    w(
        "ok-zstd2-gfx906+gfx90a.bin",
        &compress(&two, Method::Zstd, 2, None).unwrap(),
    );
    w(
        "ok-zlib3-gfx1200.bin",
        &compress(&one, Method::Zlib, 3, None).unwrap(),
    );
    // Version 1 header: no total size.
    let z = compress(&one, Method::Zstd, 2, None).unwrap();
    let mut v1 = b"CCOB\x01\x00\x01\x00".to_vec();
    v1.extend_from_slice(&z[12..16]);
    v1.extend_from_slice(&z[16..24]);
    v1.extend_from_slice(&z[24..]);
    w("ok-v1-gfx1200.bin", &v1);
    let mut seq = two.clone();
    seq.resize(4096, 0);
    seq.extend_from_slice(&compress(&one, Method::Zstd, 3, None).unwrap());
    w("ok-sequence-gfx906+gfx90a+gfx1200.bin", &seq);
    w("bad-truncated.bin", &two[..two.len() - 3]);
    let mut count = two.clone();
    count[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    w("bad-count.bin", &count);
    let mut ztrunc = compress(&two, Method::Zstd, 2, None).unwrap();
    ztrunc.truncate(ztrunc.len() - 5);
    w("bad-ccob-truncated.bin", &ztrunc);
    w(
        "bad-magic.bin",
        b"__CLANG_OFFLOAD_BUNDLX__\x01\0\0\0\0\0\0\0",
    );
}
