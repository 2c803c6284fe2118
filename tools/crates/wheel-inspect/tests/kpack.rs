//! `inspect` on kpack archives: rocm-kpack's own test archives, listed as
//! its reader lists them (the TOCs decoded in tools/crates/kpack's tests).

use wheel_inspect::inspect;

#[test]
fn reference_archives_list_their_targets_and_kernels() {
    let assets = test_support::rocm_kpack_src().join("runtime/tests/test_assets");
    let r = inspect(&assets.join("test_zstd.kpack")).unwrap();
    assert_eq!(r.kind, "kpack");
    let a = &r.kpack_archives[0];
    assert_eq!(
        (a.group.as_str(), a.compression),
        ("test", "zstd-per-kernel")
    );
    assert_eq!(a.targets, ["gfx1100", "gfx1101"]);
    let kernels: Vec<(String, String, u64)> = a
        .kernels
        .iter()
        .map(|k| (k.key.clone(), k.target.clone(), k.size))
        .collect();
    assert_eq!(
        kernels,
        [
            ("lib/libhip.so#0".into(), "gfx1100".into(), 1019),
            ("lib/libhip.so#0".into(), "gfx1101".into(), 619),
            ("bin/hiptest#0".into(), "gfx1100".into(), 1018),
        ]
    );
    let text = r.to_text();
    assert!(
        text.contains(
            "kpack archive, group test, targets gfx1100, gfx1101, 3 kernels (zstd-per-kernel)"
        ),
        "{text}"
    );
    let r = inspect(&assets.join("test_noop.kpack")).unwrap();
    assert_eq!(r.kpack_archives[0].compression, "none");
}

#[test]
fn a_truncated_archive_is_refused() {
    let data = std::fs::read(
        test_support::rocm_kpack_src().join("runtime/tests/test_assets/test_zstd.kpack"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.kpack");
    std::fs::write(&f, &data[..data.len() - 10]).unwrap();
    assert!(inspect(&f).is_err());
}
