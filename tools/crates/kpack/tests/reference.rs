//! The format against rocm-kpack itself: its reference archives read as its
//! reader reads them and written back byte for byte, and archives written
//! here read by its Python reader with the same table and kernels.

use std::path::{Path, PathBuf};
use std::process::Command;

use kpack::{Archive, ArchiveWriter, Compression};
use serde_json::{json, Value};

fn asset(name: &str) -> PathBuf {
    test_support::rocm_kpack_src()
        .join("runtime/tests/test_assets")
        .join(name)
}

/// Every kernel of an archive as {key: {target: [size, first bytes hex]}}
/// plus the table's names, as this crate reads it.
fn ours(path: &Path) -> Value {
    let mut a = Archive::open(path).unwrap();
    let toc = a.toc.clone();
    let mut binaries = serde_json::Map::new();
    for (key, arches) in &toc.binaries {
        let mut per = serde_json::Map::new();
        for (arch, r) in arches {
            let k = a.kernel(key, arch).unwrap();
            assert_eq!(k.len() as u64, r.original_size);
            per.insert(arch.clone(), json!([r.ordinal, k.len(), hex(&k)]));
        }
        binaries.insert(key.clone(), Value::Object(per));
    }
    json!({"group_name": toc.group_name, "gfx_arch_family": toc.gfx_arch_family,
           "gfx_arches": toc.gfx_arches, "toc": binaries})
}

/// The same through the reference's PackedKernelArchive.
fn theirs(path: &Path) -> Value {
    let script = r#"
import json, sys, hashlib
from pathlib import Path
from rocm_kpack.kpack import PackedKernelArchive
a = PackedKernelArchive.read(Path(sys.argv[1]))
toc = {}
for key, arches in a.toc.items():
    toc[key] = {}
    for arch, e in arches.items():
        k = a.get_kernel(key, arch)
        toc[key][arch] = [e["ordinal"], len(k), hashlib.sha256(k).hexdigest()]
print(json.dumps({"group_name": a.group_name, "gfx_arch_family": a.gfx_arch_family,
                  "gfx_arches": a.gfx_arches, "toc": toc}))
"#;
    let out = Command::new(test_support::venv_bin("python"))
        .env("PYTHONPATH", test_support::rocm_kpack_src().join("python"))
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "reference reader: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn reference_archives_read_as_the_reference_reads_them() {
    for name in ["test_noop.kpack", "test_zstd.kpack"] {
        let path = asset(name);
        assert_eq!(ours(&path), theirs(&path), "{name}");
    }
    let a = Archive::open(&asset("test_zstd.kpack")).unwrap();
    assert_eq!(a.toc.compression, Compression::ZstdPerKernel);
    assert_eq!(a.toc.gfx_arches, ["gfx1100", "gfx1101"]);
    assert_eq!(
        a.toc
            .kernel("lib/libhip.so#0", "gfx1100")
            .unwrap()
            .original_size,
        1019
    );
}

#[test]
fn reference_archives_are_rewritten_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["test_noop.kpack", "test_zstd.kpack"] {
        let mut a = Archive::open(&asset(name)).unwrap();
        let toc = a.toc.clone();
        // Kernels in ordinal order, as the reference added them.
        let mut kernels: Vec<(u64, String, String)> = toc
            .binaries
            .iter()
            .flat_map(|(k, arches)| {
                arches
                    .iter()
                    .map(move |(arch, r)| (r.ordinal, k.clone(), arch.clone()))
            })
            .collect();
        kernels.sort();
        let mut w = ArchiveWriter::new(
            &toc.group_name,
            &toc.gfx_arch_family,
            &toc.gfx_arches,
            toc.compression,
        );
        for (ordinal, key, arch) in kernels {
            let f = tmp.path().join(format!("{name}.{ordinal}"));
            std::fs::write(&f, a.kernel(&key, &arch).unwrap()).unwrap();
            w.add(&key, &arch, &f).unwrap();
        }
        let out = tmp.path().join(name);
        w.write(&out).unwrap();
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(asset(name)).unwrap(),
            "{name} differs when rewritten"
        );
    }
}

#[test]
fn archives_written_here_read_the_same_in_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let arches = ["gfx1200".to_string(), "gfx1201".to_string()];
    for compression in [Compression::None, Compression::ZstdPerKernel] {
        let mut w = ArchiveWriter::new("jax_rocm7_plugin", "gfx1201", &arches, compression);
        for (i, key) in [
            "pkg/_hip/a/x.hip#0",
            "pkg/_hip/b/y.hip#0",
            "pkg/_hip/b/y.hip#1",
        ]
        .iter()
        .enumerate()
        {
            for (j, arch) in arches.iter().enumerate() {
                // Compressible and distinct contents, 300 B to 70 KiB.
                let data: Vec<u8> = (0..300 + 35_000 * (i + j))
                    .map(|n| ((n / 7 + i * 31 + j) % 251) as u8)
                    .collect();
                let f = tmp.path().join(format!("{i}.{j}.co"));
                std::fs::write(&f, &data).unwrap();
                w.add(key, arch, &f).unwrap();
            }
        }
        let out = tmp.path().join(format!("{}.kpack", compression.scheme()));
        w.write(&out).unwrap();
        assert_eq!(ours(&out), theirs(&out), "{}", compression.scheme());
    }
}

#[test]
fn bad_input_is_refused_naming_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = ArchiveWriter::new("g", "gfx1201", &["gfx1201".into()], Compression::None);
    let f = tmp.path().join("k.co");
    std::fs::write(&f, b"code").unwrap();
    let err = w.add("k#0", "gfx942", &f).unwrap_err().to_string();
    assert!(err.contains("gfx942") && err.contains("gfx1201"), "{err}");
    assert!(w
        .add("no-index", "gfx1201", &f)
        .unwrap_err()
        .to_string()
        .contains("#<code object index>"));
    w.add("k#0", "gfx1201", &f).unwrap();
    assert!(w.add("k#0", "gfx1201", &f).is_err());
    // A missing input leaves no output behind.
    let mut w2 = ArchiveWriter::new("g", "gfx1201", &["gfx1201".into()], Compression::None);
    w2.add("k#0", "gfx1201", &tmp.path().join("missing.co"))
        .unwrap();
    let out = tmp.path().join("out.kpack");
    assert!(w2.write(&out).is_err());
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "only k.co remains"
    );
    // Truncated and lying archives.
    w.write(&out).unwrap();
    let good = std::fs::read(&out).unwrap();
    let bad = tmp.path().join("bad.kpack");
    std::fs::write(&bad, &good[..good.len() - 3]).unwrap();
    assert!(Archive::open(&bad).is_err());
    let mut lying = good.clone();
    lying[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&bad, &lying).unwrap();
    let err = Archive::open(&bad).err().unwrap().to_string();
    assert!(err.contains("TOC offset"), "{err}");
}
