//! Runs the fuzz target's body over the committed seed corpus
//! (`fuzz/corpus/read_bundle`). Seeds named `ok-*` must read and list the
//! targets in their name; seeds named `bad-*` must be rejected. The
//! `ok-clang*` seeds were written by the build root's clang-offload-bundler (plain,
//! and `-compress` in CCOB versions 2 and 3), the others by our own writer
//! or by hand; `regenerate_seed_corpus` makes them all.

use std::path::PathBuf;

use offload_bundle::{build_uncompressed, compress, fuzz_read, read_bundle, Limits, Method};

fn corpus_dir() -> PathBuf {
    test_support::manifest_dir().join("fuzz/corpus/read_bundle")
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
    for (name, _) in real_bundler_seeds() {
        assert!(
            corpus_dir().join(&name).exists(),
            "seed {name} is missing: regenerate the corpus (see regenerate_seed_corpus)"
        );
    }
}

/// The fuzz body on bundles freshly written by the real tool.
#[test]
fn fuzz_body_over_clang_offload_bundler_output() {
    for (name, data) in real_bundler_seeds() {
        let targets = fuzz_read(&data).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let want = name.trim_end_matches(".bin").rsplit('-').next().unwrap();
        assert_eq!(targets.join("+"), want, "{name}");
    }
}

/// The committed `ok-clang*` seeds are what clang-offload-bundler writes
/// today: the plain one byte for byte; the compressed ones with the same
/// CCOB header fields and the same bundle inside (the compressed bytes
/// depend on the zstd library's version).
#[test]
fn committed_clang_seeds_match_the_tool() {
    let limits = Limits::default();
    for (name, fresh) in real_bundler_seeds() {
        let committed = std::fs::read(corpus_dir().join(&name)).unwrap_or_else(|e| {
            panic!("{name}: {e}: regenerate the corpus (see regenerate_seed_corpus)")
        });
        let (a, b) = (
            read_bundle(&committed, &limits).unwrap(),
            read_bundle(&fresh, &limits).unwrap(),
        );
        match (&a.compressed, &b.compressed) {
            (None, None) => assert!(committed == fresh, "{name} differs from the tool's output"),
            (Some(x), Some(y)) => {
                assert_eq!(
                    (x.version, x.method, x.uncompressed_size, x.hash),
                    (y.version, y.method, y.uncompressed_size, y.hash),
                    "{name}"
                );
                assert_eq!(a.uncompressed(), b.uncompressed(), "{name}");
            }
            _ => panic!("{name}: compressed and plain differ"),
        }
    }
}

/// A 64-byte AMDGPU ELF64 header with EF_AMDGPU_MACH `mach`: enough of a
/// code object for the bundle formats, which do not look inside.
fn fake_code_object(mach: u8) -> Vec<u8> {
    let mut e = vec![0u8; 64];
    e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
    e[18] = 224;
    e[48] = mach;
    e
}

/// What the build root's clang-offload-bundler writes for a host entry and fake
/// code objects `(entry id, EF_AMDGPU_MACH)`: `extra` arguments, and
/// `-compress` in CCOB format `version` if given.
fn clang_bundle_bytes(entries: &[(&str, u8)], extra: &[&str], version: Option<u16>) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let mut targets = vec![format!("host-{}", test_support::HOST)];
    let mut cmd = test_support::llvm_cmd("clang-offload-bundler");
    cmd.arg("-type=o").args(extra).arg("-input=/dev/null");
    for (i, (id, mach)) in entries.iter().enumerate() {
        let p = dir.path().join(format!("{i}.co"));
        std::fs::write(&p, fake_code_object(*mach)).unwrap();
        targets.push(id.to_string());
        cmd.arg(format!("-input={}", p.display()));
    }
    let out = dir.path().join("out.bin");
    cmd.arg(format!("-targets={}", targets.join(",")))
        .arg(format!("-output={}", out.display()));
    if let Some(v) = version {
        cmd.arg("-compress")
            .env("COMPRESSED_BUNDLE_FORMAT_VERSION", v.to_string());
    }
    test_support::run(&mut cmd);
    std::fs::read(&out).unwrap()
}

const TWO: [(&str, u8); 2] = [
    ("hipv4-amdgcn-amd-amdhsa--gfx906", 0x2f),
    ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", 0x3f),
];

/// The seeds written by clang-offload-bundler, as (file name, contents):
/// a plain one without alignment (the tool's default, keeps it tiny) and
/// compressed ones laid out as the HIP driver asks (4096).
fn real_bundler_seeds() -> Vec<(String, Vec<u8>)> {
    let three = [
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", 0x41),
        ("hipv4-amdgcn-amd-amdhsa--gfx1151", 0x4a),
        ("hipv4-amdgcn-amd-amdhsa--gfx1201", 0x4e),
    ];
    let one = [("hipv4-amdgcn-amd-amdhsa--gfx1200", 0x48)];
    vec![
        (
            "ok-clang-gfx1100+gfx1151+gfx1201.bin".to_string(),
            clang_bundle_bytes(&three, &[], None),
        ),
        (
            "ok-clangzstd2-gfx906+gfx90a.bin".to_string(),
            clang_bundle_bytes(&TWO, &["-bundle-align=4096"], Some(2)),
        ),
        (
            "ok-clangzstd3-gfx1200.bin".to_string(),
            clang_bundle_bytes(&one, &["-bundle-align=4096"], Some(3)),
        ),
    ]
}

/// The hand-laid seeds have clang-offload-bundler's unaligned layout.
#[test]
fn hand_laid_seeds_match_clang_offload_bundler() {
    let (a, b) = (fake_code_object(TWO[0].1), fake_code_object(TWO[1].1));
    let ours = compact(&[
        (&format!("host-{}-", test_support::HOST), &[]),
        (TWO[0].0, &a),
        (TWO[1].0, &b),
    ]);
    assert!(ours == clang_bundle_bytes(&TWO, &[], None));
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
    let (a, b) = (fake_code_object(TWO[0].1), fake_code_object(TWO[1].1));
    let two = compact(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        (TWO[0].0, &a),
        (TWO[1].0, &b),
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
    for (name, data) in real_bundler_seeds() {
        w(&name, &data);
    }
}

/// The fuzz crate's own lock file lists this crate's dependencies as they are.
#[test]
fn fuzz_lock_file_is_current() {
    test_support::assert_fuzz_lock_file_current(&test_support::manifest_dir());
}
