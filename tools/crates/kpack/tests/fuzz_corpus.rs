//! Runs the fuzz bodies (the fuzz crate's `src/lib.rs`, included here) over
//! the committed seed corpus (`fuzz/corpus/<target>`), each seed also cut
//! short and with bytes flipped, so regressions show up without cargo-fuzz.
//! Seeds named `ok-*` must be accepted, `bad-*` refused; a broken promise
//! panics, and fails the test wherever it happens.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use anyhow::Result;

// The environment switch and the timeout and oom plants serve the fuzz
// targets (run.sh --controls), not this test.
#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod bodies;
use bodies::Plant;

type Body = fn(&[u8], Plant) -> Result<()>;

const TARGETS: [(&str, Body); 4] = [
    ("archive", bodies::archive),
    ("marker", bodies::marker),
    ("host", bodies::host),
    ("device_wheel", bodies::device_wheel),
];

fn corpus_dir(target: &str) -> PathBuf {
    test_support::manifest_dir()
        .join("fuzz/corpus")
        .join(target)
}

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(corpus_dir(target))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn fuzz_bodies_over_corpus() {
    for (target, body) in TARGETS {
        let seeds = seeds(target);
        assert!(
            seeds.iter().any(|(n, _)| n.starts_with("ok-")),
            "{target}: no ok- seed"
        );
        for (name, data) in seeds {
            match (name.split('-').next(), body(&data, Plant::None)) {
                (Some("ok"), Err(e)) => panic!("{target}/{name}: refused: {e:#}"),
                (Some("bad"), Ok(())) => panic!("{target}/{name}: accepted, must be refused"),
                (Some("ok" | "bad"), _) => {}
                _ => panic!("{target}/{name}: name a seed ok-* or bad-*"),
            }
            // Cut short at a few points, and 48 single-byte flips spread
            // over the seed: refused or accepted, never a broken promise.
            let n = data.len();
            for len in [0, 1, 4, 16, n / 3, n / 2, n.saturating_sub(1)] {
                let _ = body(&data[..len.min(n)], Plant::None);
            }
            for i in 0..48 {
                if n == 0 {
                    break;
                }
                let mut m = data.clone();
                let at = (i * 7919 + i * i) % n;
                m[at] ^= 0x80 | (i as u8);
                let _ = body(&m, Plant::None);
            }
        }
    }
}

/// The negative control: with a broken promise planted, every body panics on
/// its `ok-` seeds (what libFuzzer reports as a crash), and still only
/// refuses its `bad-` seeds.
#[test]
fn planted_broken_promise_panics() {
    for (target, body) in TARGETS {
        for (name, data) in seeds(target) {
            let r = catch_unwind(AssertUnwindSafe(|| body(&data, Plant::BrokenPromise)));
            match r {
                Err(_) => assert!(name.starts_with("ok-"), "{target}/{name}: panicked"),
                Ok(r) => assert!(
                    name.starts_with("bad-") && r.is_err(),
                    "{target}/{name}: a planted broken promise went unreported"
                ),
            }
        }
    }
}

/// The fuzz crate's own lock file lists this crate's dependencies as they are.
#[test]
fn fuzz_lock_file_is_current() {
    test_support::assert_fuzz_lock_file_current(&test_support::manifest_dir());
}

/// Regenerates the `ok-` seeds:
/// `cargo test -p kpack --test fuzz_corpus -- --ignored`.
#[test]
#[ignore]
fn regenerate_seeds() {
    use kpack::{ArchiveWriter, Compression, Marker};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let write = |target: &str, name: &str, data: &[u8]| {
        std::fs::write(corpus_dir(target).join(name), data).unwrap();
    };
    std::fs::write(dir.join("a.co"), b"first code object").unwrap();
    std::fs::write(dir.join("b.co"), vec![0x5a; 300]).unwrap();
    let targets = vec!["gfx1200".to_string(), "gfx1201".to_string()];
    for (c, name) in [
        (Compression::ZstdPerKernel, "ok-zstd.kpack"),
        (Compression::None, "ok-none.kpack"),
    ] {
        let mut w = ArchiveWriter::new("demo", "gfx120X", &targets, c);
        w.add("demo/k.hip#0", "gfx1200", &dir.join("a.co")).unwrap();
        w.add("demo/k.hip#0", "gfx1201", &dir.join("b.co")).unwrap();
        w.add("demo/l.hip#1", "gfx1201", &dir.join("a.co")).unwrap();
        w.write(&dir.join(name)).unwrap();
        write("archive", name, &std::fs::read(dir.join(name)).unwrap());
    }
    let m = |paths: &[&str]| {
        Marker {
            kernel_name: "demo/k.hip".into(),
            search_paths: paths.iter().map(|p| p.to_string()).collect(),
        }
        .to_bytes()
        .unwrap()
    };
    let one = m(&[".kpack/@GFXARCH@.kpack", "../.kpack/@GFXARCH@.kpack"]);
    let mut two = one.clone();
    two.extend(m(&["a/@GFXARCH@.kpack", "a/@GFXARCH@.kpack", ""]));
    write("marker", "ok-one.bin", &one);
    write("marker", "ok-two-repeated-paths.bin", &two);

    let so = assembled_host(dir, &one);
    write("host", "ok-three-wrappers.so", &so);

    let kpack = std::fs::read(dir.join("ok-zstd.kpack")).unwrap();
    let whl = test_support::make_wheel(
        dir,
        "demo_device_gfx1201-1.0-py3-none-any.whl",
        true,
        &[("demo/.kpack/gfx1201.kpack", kpack)],
    );
    write(
        "device_wheel",
        "ok-gfx1201.whl",
        &std::fs::read(whl).unwrap(),
    );
}

/// A shared object with three HIPK wrappers relocated to `marker`.
fn assembled_host(dir: &Path, marker: &[u8]) -> Vec<u8> {
    std::fs::write(dir.join("m.bin"), marker).unwrap();
    std::fs::write(
        dir.join("h.s"),
        ".section .rocm_kpack_ref,\"a\",@progbits\nm:\n.incbin \"m.bin\"\n\
         .section .hipFatBinSegment,\"aw\",@progbits\n.p2align 3\n.rept 3\n\
         .long 0x4B504948\n.long 1\n.quad m\n.long 0\n.long 0\n.endr\n",
    )
    .unwrap();
    test_support::run_stdout(test_support::llvm_cmd("clang").current_dir(dir).args([
        "-shared",
        "-nostdlib",
        "-fuse-ld=lld",
        "-o",
        "h.so",
        "h.s",
    ]));
    std::fs::read(dir.join("h.so")).unwrap()
}
