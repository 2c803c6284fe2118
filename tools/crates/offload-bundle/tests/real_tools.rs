//! Bundles made and checked by the real tools of the build root: LLVM's
//! clang++, clang-offload-bundler and lld, Python's zstandard.

use std::collections::BTreeSet;
use std::process::Command;

use offload_bundle::{
    read_bundle, read_bundles, read_file_bundles, write_bundle_file, Compression, Limits, Method,
    WriteRequest,
};
use sha2::{Digest, Sha256};
use test_support::*;

fn sha256(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn device_targets(b: &offload_bundle::Bundle) -> BTreeSet<String> {
    b.device_entries()
        .map(|e| e.parsed_id().target_id.to_string())
        .collect()
}

#[test]
fn reads_bundles_written_by_clang_offload_bundler() {
    let f = fixtures();
    let (co906, co90a) = (f.code_object("gfx906"), f.code_object("gfx90a"));
    let out = f.path("clang.hipfb");
    clang_bundle(
        &out,
        &[
            (&device_id("gfx906"), &co906),
            (&device_id("gfx90a"), &co90a),
        ],
    );
    let data = std::fs::read(&out).unwrap();
    let b = read_bundle(&data, &Limits::default()).unwrap();
    assert!(b.compressed.is_none());
    assert_eq!(
        device_targets(&b),
        BTreeSet::from(["gfx906".into(), "gfx90a".into()])
    );
    // Host entry is present and empty; device entries are the inputs verbatim.
    assert_eq!(
        b.entries.iter().filter(|e| e.parsed_id().is_host()).count(),
        1
    );
    for (arch, path) in [("gfx906", &co906), ("gfx90a", &co90a)] {
        let e = b.entries.iter().find(|e| e.id == device_id(arch)).unwrap();
        assert_eq!(b.entry_data(e), std::fs::read(path).unwrap(), "{arch}");
        assert_eq!(e.offset % 4096, 0);
    }

    // `-compress`: the same bundle in a zstd CCOB of either format version.
    for version in [2, 3] {
        let z = f.path(&format!("clang.v{version}.hipfb"));
        clang_bundle_compressed(
            &z,
            &[
                (&device_id("gfx906"), &co906),
                (&device_id("gfx90a"), &co90a),
            ],
            version,
        );
        let zdata = std::fs::read(&z).unwrap();
        assert_eq!(&zdata[..4], b"CCOB", "v{version}");
        let zb = read_bundle(&zdata, &Limits::default()).unwrap();
        let c = zb.compressed.as_ref().unwrap();
        assert_eq!((c.method, c.version), (Method::Zstd, version));
        assert_eq!(zb.uncompressed(), data.as_slice(), "v{version}");
        assert_eq!(zb.entries, b.entries, "v{version}");
    }
}

#[test]
fn clang_offload_bundler_reads_our_bundles() {
    let f = fixtures();
    let (co906, co90a) = (f.code_object("gfx906"), f.code_object("gfx90a"));
    let out = f.path("ours.hipfb");
    write_bundle_file(&WriteRequest {
        output: out.clone(),
        host_triple: HOST.into(),
        // Deliberately unsorted: the output order must not depend on it.
        entries: vec![
            (device_id("gfx90a"), co90a.clone()),
            (device_id("gfx906"), co906.clone()),
        ],
        compression: Compression::None,
    })
    .unwrap();
    let listed = run(llvm_cmd("clang-offload-bundler")
        .args(["--list", "-type=o"])
        .arg(format!("-input={}", out.display())));
    let ids: BTreeSet<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        ids,
        BTreeSet::from([
            format!("host-{HOST}-"),
            device_id("gfx906"),
            device_id("gfx90a")
        ])
    );
    let x = f.path("unbundled.gfx90a.co");
    run(llvm_cmd("clang-offload-bundler")
        .args(["-unbundle", "-type=o"])
        .arg(format!("-targets={}", device_id("gfx90a")))
        .arg(format!("-input={}", out.display()))
        .arg(format!("-output={}", x.display())));
    assert_eq!(std::fs::read(&x).unwrap(), std::fs::read(&co90a).unwrap());

    // Byte for byte clang's own bundle of the same inputs: host first (clang
    // 21 spells the id `host-<triple>-` even when given `host-<triple>`),
    // devices sorted, 4096-aligned.
    let theirs = f.path("theirs.hipfb");
    clang_bundle(
        &theirs,
        &[
            (&device_id("gfx906"), &co906),
            (&device_id("gfx90a"), &co90a),
        ],
    );
    let (ours_data, theirs_data) = (
        std::fs::read(&out).unwrap(),
        std::fs::read(&theirs).unwrap(),
    );
    let a = read_bundle(&ours_data, &Limits::default()).unwrap();
    let b = read_bundle(&theirs_data, &Limits::default()).unwrap();
    assert_eq!(a.entries, b.entries);
    assert!(
        ours_data == theirs_data,
        "our bundle differs from clang-offload-bundler's"
    );
}

/// clang-offload-bundler reads every compressed form we write.
#[test]
fn clang_offload_bundler_reads_our_compressed_bundles() {
    let f = fixtures();
    let (co906, co90a) = (f.code_object("gfx906"), f.code_object("gfx90a"));
    for (method, version) in [
        (Method::Zstd, 2),
        (Method::Zstd, 3),
        (Method::Zlib, 2),
        (Method::Zlib, 3),
    ] {
        let z = f.path(&format!("ours.{}.v{version}.hipfb", method.name()));
        write_bundle_file(&WriteRequest {
            output: z.clone(),
            host_triple: HOST.into(),
            entries: vec![
                (device_id("gfx906"), co906.clone()),
                (device_id("gfx90a"), co90a.clone()),
            ],
            compression: Compression::Compressed {
                method,
                version,
                level: None,
            },
        })
        .unwrap();
        let x = f.path(&format!("unbundled.{}.v{version}.co", method.name()));
        run(llvm_cmd("clang-offload-bundler")
            .args(["-unbundle", "-type=o"])
            .arg(format!("-targets={}", device_id("gfx906")))
            .arg(format!("-input={}", z.display()))
            .arg(format!("-output={}", x.display())));
        assert_eq!(
            std::fs::read(&x).unwrap(),
            std::fs::read(&co906).unwrap(),
            "{} v{version}",
            method.name()
        );
    }
}

#[test]
fn our_bundle_links_into_a_shared_object() {
    let f = fixtures();
    let (co906, co90a) = (f.code_object("gfx906"), f.code_object("gfx90a"));
    let fb = f.path("link.hipfb");
    write_bundle_file(&WriteRequest {
        output: fb.clone(),
        host_triple: HOST.into(),
        entries: vec![(device_id("gfx906"), co906), (device_id("gfx90a"), co90a)],
        compression: Compression::Compressed {
            method: Method::Zstd,
            version: 2,
            level: None,
        },
    })
    .unwrap();
    let obj = f.path("link.host.o");
    host_object(&f.path("k.hip"), &fb, &obj);
    let so = f.path("liblink.so");
    link_shared(&[&obj], &so, &[]);
    let bundles = read_file_bundles(&std::fs::read(&so).unwrap()).unwrap();
    assert_eq!(bundles.len(), 1);
    assert_eq!(bundles[0].compressed.as_ref().unwrap().method, Method::Zstd);
    assert_eq!(
        device_targets(&bundles[0]),
        BTreeSet::from(["gfx906".into(), "gfx90a".into()])
    );
}

/// Our compressed output, read by the independent Python reader.
#[test]
fn compressed_bundles_cross_checked_by_python() {
    let f = fixtures();
    let (co906, co90a) = (f.code_object("gfx906"), f.code_object("gfx90a"));
    let z1200 = f.code_object("gfx1200");
    let inputs = [
        (device_id("gfx906"), co906),
        (device_id("gfx90a"), co90a),
        (device_id("gfx1200"), z1200),
    ];
    for (method, version) in [
        (Method::Zstd, 2),
        (Method::Zstd, 3),
        (Method::Zlib, 2),
        (Method::Zlib, 3),
    ] {
        let out = f.path(&format!("x.{}.v{version}.hipfb", method.name()));
        write_bundle_file(&WriteRequest {
            output: out.clone(),
            host_triple: HOST.into(),
            entries: inputs.to_vec(),
            compression: Compression::Compressed {
                method,
                version,
                level: None,
            },
        })
        .unwrap();
        let o = run(Command::new(venv_bin("python"))
            .arg(test_support::manifest_dir().join("tests/ccob.py"))
            .arg("read")
            .arg(&out));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ctx = format!("{} v{version}: {v}", method.name());
        assert_eq!(v["version"], version, "{ctx}");
        assert_eq!(v["method"], method.name(), "{ctx}");
        assert_eq!(v["total_size"], v["file_size"], "{ctx}");
        assert_eq!(v["uncompressed_size"], v["decompressed_size"], "{ctx}");
        assert_eq!(v["hash_ok"], true, "{ctx}");
        let entries = v["entries"].as_array().unwrap();
        assert_eq!(entries[0]["id"], format!("host-{HOST}-"), "{ctx}");
        assert_eq!(entries[0]["size"], 0, "{ctx}");
        let got: Vec<(String, String)> = entries[1..]
            .iter()
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_string(),
                    e["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let mut want: Vec<(String, String)> = inputs
            .iter()
            .map(|(id, p)| (id.clone(), sha256(&std::fs::read(p).unwrap())))
            .collect();
        want.sort();
        assert_eq!(got, want, "{ctx}");
    }
}

/// Compressed bundles written by the independent Python writer around a
/// bundle from clang-offload-bundler, read by us.
#[test]
fn reads_compressed_bundles_written_by_python() {
    let f = fixtures();
    let co = f.code_object("gfx90a");
    let inner = f.path("py-inner.hipfb");
    clang_bundle(&inner, &[(&device_id("gfx90a"), &co)]);
    for (method, version) in [("zstd", 2), ("zlib", 3)] {
        let out = f.path(&format!("py.{method}.{version}.hipfb"));
        run(Command::new(venv_bin("python"))
            .arg(test_support::manifest_dir().join("tests/ccob.py"))
            .arg("write")
            .args([&inner, &out])
            .args([method, &version.to_string()]));
        let b = read_bundle(&std::fs::read(&out).unwrap(), &Limits::default()).unwrap();
        let c = b.compressed.as_ref().unwrap();
        assert_eq!((c.method.name(), c.version), (method, version));
        assert_eq!(b.uncompressed(), std::fs::read(&inner).unwrap());
        let e = b.device_entries().next().unwrap();
        assert_eq!(b.entry_data(e), std::fs::read(&co).unwrap());
    }
}

/// Several bundles back to back, each 4096-aligned, mixed compression — the
/// shape of a `.hip_fatbin` section linked from several objects.
#[test]
fn reads_back_to_back_bundles() {
    let f = fixtures();
    let co = f.code_object("gfx906");
    let z = f.code_object("gfx1201");
    let plain = offload_bundle::build_uncompressed(
        HOST,
        &[(device_id("gfx906"), std::fs::read(&co).unwrap())],
    )
    .unwrap();
    let other = offload_bundle::build_uncompressed(
        HOST,
        &[(device_id("gfx1201"), std::fs::read(&z).unwrap())],
    )
    .unwrap();
    let parts = [
        plain.clone(),
        offload_bundle::compress(&other, Method::Zstd, 3, Some(19)).unwrap(),
        offload_bundle::compress(&plain, Method::Zlib, 2, None).unwrap(),
    ];
    let mut section = Vec::new();
    for p in &parts {
        section.resize(section.len().div_ceil(4096) * 4096, 0);
        section.extend_from_slice(p);
    }
    let bs = read_bundles(&section, &Limits::default()).unwrap();
    let targets: Vec<BTreeSet<String>> = bs.iter().map(device_targets).collect();
    assert_eq!(
        targets,
        [
            BTreeSet::from(["gfx906".to_string()]),
            BTreeSet::from(["gfx1201".to_string()]),
            BTreeSet::from(["gfx906".to_string()]),
        ]
    );
    assert_eq!(bs[1].start, (plain.len().div_ceil(4096) * 4096) as u64);
    assert_eq!(bs[2].uncompressed(), plain.as_slice());
}

/// Our EF_AMDGPU_MACH table agrees with what the build root's LLVM writes for every gfx
/// processor it knows.
#[test]
fn mach_table_matches_llvm() {
    let f = fixtures();
    let o = llvm_cmd("clang")
        .args([
            "-cc1",
            "-triple",
            "amdgcn-amd-amdhsa",
            "-target-cpu",
            "gfx0",
        ])
        .args(["-x", "hip", "-fcuda-is-device", "-emit-obj"])
        .arg(f.path("b.hip"))
        .arg("-o")
        .arg(f.path("none.o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let list = err
        .split("valid target CPU values are:")
        .nth(1)
        .unwrap_or_else(|| panic!("unexpected clang -cc1 output: {err}"));
    let procs: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|p| p.starts_with("gfx"))
        .collect();
    assert!(procs.len() > 40, "{procs:?}");
    // The targets the project builds for are among them.
    for t in [
        "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1200", "gfx1201", "gfx1250",
    ] {
        assert!(procs.contains(&t), "{t} missing from {procs:?}");
    }
    for p in procs {
        let co = f.bare_code_object(p);
        let hdr = offload_bundle::read_code_object_header(&std::fs::read(&co).unwrap(), p).unwrap();
        assert_eq!(
            offload_bundle::mach_of_processor(p),
            Some(hdr.mach()),
            "{p}: LLVM writes EF_AMDGPU_MACH {:#x}",
            hdr.mach()
        );
        // And the writer accepts it under its own name.
        offload_bundle::check_code_object(&device_id(p), &std::fs::read(&co).unwrap(), p).unwrap();
    }
}

/// clang records `--offload-arch=gfx90a:xnack+` in e_flags; the writer
/// insists the entry id says the same.
#[test]
fn target_features_must_match() {
    let f = fixtures();
    let co = f.code_object("gfx90a:xnack+");
    let data = std::fs::read(&co).unwrap();
    let hdr = offload_bundle::read_code_object_header(&data, "co").unwrap();
    assert_eq!(hdr.target_id().as_deref(), Some("gfx90a:xnack+"));
    offload_bundle::check_code_object(&device_id("gfx90a:xnack+"), &data, "co").unwrap();
    for wrong in ["gfx90a", "gfx90a:xnack-", "gfx90a:xnack+:sramecc+"] {
        let e = offload_bundle::check_code_object(&device_id(wrong), &data, "co").unwrap_err();
        assert!(
            format!("{e:#}").contains("xnack") || format!("{e:#}").contains("sramecc"),
            "{wrong}: {e:#}"
        );
    }
    // And clang-offload-bundler accepts what we write for it.
    let out = f.path("xnack.hipfb");
    write_bundle_file(&WriteRequest {
        output: out.clone(),
        host_triple: HOST.into(),
        entries: vec![(device_id("gfx90a:xnack+"), co.clone())],
        compression: Compression::None,
    })
    .unwrap();
    let x = f.path("xnack.out.co");
    run(llvm_cmd("clang-offload-bundler")
        .args(["-unbundle", "-type=o"])
        .arg(format!("-targets={}", device_id("gfx90a:xnack+")))
        .arg(format!("-input={}", out.display()))
        .arg(format!("-output={}", x.display())));
    assert_eq!(std::fs::read(&x).unwrap(), data);
}
