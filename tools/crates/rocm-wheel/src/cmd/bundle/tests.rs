//! The command line the Bazel rules use, parsed and run in-process.
use super::*;
use crate::cmd::parse_args;

fn rw(argv: &[&str]) -> Result<()> {
    run(parse_args::<Args>("bundle", argv)?)
}

/// The ELF header of an AMDGPU code object for `mach` (enough for the
/// writer's checks; real code objects are used in the crate tests).
fn code_object(mach: u8, fill: u8) -> Vec<u8> {
    let mut e = vec![fill; 256];
    e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
    e[8] = 3; // code object v5
    e[16] = 3; // ET_DYN
    e[17] = 0;
    e[18..20].copy_from_slice(&224u16.to_le_bytes());
    // No program or section headers: a structurally valid ELF file.
    e[20..64].fill(0);
    e[48..52].copy_from_slice(&(mach as u32 | 0x100).to_le_bytes()); // xnack any
    e[52] = 64; // e_ehsize
    e
}

/// `bundle write` of two entries for the x86-64 host.
fn write(out: &str, compress: &str, version: &str, entries: [&str; 2]) -> Result<()> {
    let host = "x86_64-unknown-linux-gnu";
    rw(&[
        "write",
        "--output",
        out,
        "--compress",
        compress,
        "--format-version",
        version,
        "--host-triple",
        host,
        "--entry",
        entries[0],
        "--entry",
        entries[1],
    ])
}

#[test]
fn write_list_extract() {
    let dir = std::env::temp_dir().join(format!("rocm-wheel-bundle-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    std::fs::write(p("a.co"), code_object(0x3f, 1)).unwrap();
    std::fs::write(p("b.co"), code_object(0x48, 2)).unwrap();
    for (compress, version) in [("none", "2"), ("zstd", "2"), ("zlib", "3"), ("zstd", "3")] {
        let gfx90a = format!("hipv4-amdgcn-amd-amdhsa--gfx90a={}", p("a.co"));
        let gfx1200 = format!("hipv4-amdgcn-amd-amdhsa--gfx1200={}", p("b.co"));
        let out = p(&format!("k.{compress}{version}.hipfb"));
        write(&out, compress, version, [&gfx90a, &gfx1200]).unwrap();
        let data = std::fs::read(&out).unwrap();
        // Deterministic, whatever the order of --entry flags.
        let again = p("again.hipfb");
        write(&again, compress, version, [&gfx1200, &gfx90a]).unwrap();
        assert_eq!(std::fs::read(&again).unwrap(), data, "{compress}{version}");
        let want_magic: &[u8] = if compress == "none" {
            b"__CLANG"
        } else {
            b"CCOB"
        };
        assert!(data.starts_with(want_magic), "{compress}");
        rw(&["list", &out]).unwrap();
        rw(&["list", "--json", &out]).unwrap();
        let x = p("x.co");
        rw(&["extract", &out, "--target", "gfx1200", "--output", &x]).unwrap();
        assert_eq!(std::fs::read(&x).unwrap(), code_object(0x48, 2));
        let e = rw(&["extract", &out, "--target", "gfx906", "--output", &x]).unwrap_err();
        assert!(
            format!("{e:#}").contains("targets present: gfx1200, gfx90a"),
            "{e:#}"
        );
    }
    // Bad flags are refused by the parser, before anything is written.
    let bad = p("bad.hipfb");
    let base = ["write", "--output", &bad, "--host-triple", "x"];
    for extra in [&["--format-version", "4"][..], &["--compress", "lz4"], &[]] {
        let argv: Vec<&str> = base.iter().chain(extra).copied().collect();
        assert!(rw(&argv).is_err(), "{argv:?}");
    }
    let e = rw(&[
        "write",
        "--output",
        &bad,
        "--host-triple",
        "x86_64-unknown-linux-gnu",
        "--entry",
        "gfx90a",
    ])
    .unwrap_err();
    assert!(format!("{e:#}").contains("is not ID=FILE"), "{e:#}");
    assert!(!std::path::Path::new(&bad).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
