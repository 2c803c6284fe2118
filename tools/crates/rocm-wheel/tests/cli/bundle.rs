//! `rocm-wheel bundle write|list|extract` on real AMDGPU code objects,
//! checked against the build root's clang-offload-bundler.

use crate::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const HOST: &str = "x86_64-unknown-linux-gnu";
const ID906: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const ID90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";

/// A work directory with the two code objects copied in.
fn setup() -> tempfile::TempDir {
    let d = tempdir();
    copy_in(&code_object("gfx906"), d.path(), "k.gfx906.co");
    copy_in(&code_object("gfx90a"), d.path(), "k.gfx90a.co");
    d
}

/// `bundle write` as the `hip_library` rule calls it.
fn write(dir: &Path, output: &str, compress: &str) -> Out {
    rw(
        dir,
        &[
            "bundle",
            "write",
            "--output",
            output,
            "--compress",
            compress,
            "--host-triple",
            HOST,
            "--entry",
            &format!("{ID90A}=k.gfx90a.co"),
            "--entry",
            &format!("{ID906}=k.gfx906.co"),
        ],
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The entry ids of a bundle in `bundle list --json` output, sorted.
fn entry_ids(bundle: &Value) -> Vec<&str> {
    let mut ids: Vec<&str> = bundle["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    ids.sort();
    ids
}

#[test]
fn write_list_extract_inspect() {
    let d = setup();
    let dir = d.path();
    for compress in ["none", "zstd", "zlib"] {
        let out = format!("k.{compress}.hipfb");
        write(dir, &out, compress).success();
        let data = std::fs::read(dir.join(&out)).unwrap();
        let magic: &[u8] = if compress == "none" {
            b"__CLANG_OFFLOAD_BUNDLE__"
        } else {
            b"CCOB"
        };
        assert!(data.starts_with(magic), "{compress}");
        check_listings(dir, &out, compress);
        check_inspect(dir, &out, compress);

        // extract gives back each code object byte for byte.
        for arch in ["gfx906", "gfx90a"] {
            let x = format!("x.{arch}.co");
            rw(
                dir,
                &["bundle", "extract", &out, "--target", arch, "--output", &x],
            )
            .success();
            assert_eq!(
                std::fs::read(dir.join(&x)).unwrap(),
                std::fs::read(dir.join(format!("k.{arch}.co"))).unwrap(),
                "{compress} {arch}"
            );
        }
    }

    // A code object on its own reports its own target.
    let v = json(
        &rw(dir, &["inspect", "--json", "k.gfx90a.co"])
            .success()
            .stdout,
    );
    assert_eq!(v["kind"], "elf");
    assert_eq!(v["elf_files"][0]["machine"], "amdgpu");
    assert_eq!(
        v["elf_files"][0]["targets"],
        serde_json::json!({"gfx90a": 1})
    );

    check_against_the_reference_tool(dir);
    check_compressed_both_ways(dir);
}

/// `bundle list` and `bundle list --json` of `out` (written by [`write`]):
/// one bundle, host entry plus the two targets.
fn check_listings(dir: &Path, out: &str, compress: &str) {
    let text = rw(dir, &["bundle", "list", out]).success().stdout;
    assert!(
        text.starts_with("bundle 0 at offset 0: "),
        "{compress}: {text}"
    );
    assert!(text.contains(", 3 entries"), "{text}");
    for id in [&format!("host-{HOST}-")[..], ID906, ID90A] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{id}  offset "))),
            "{id} not listed:\n{text}"
        );
    }

    let v = json(&rw(dir, &["bundle", "list", "--json", out]).success().stdout);
    let bundles = v["bundles"].as_array().unwrap();
    assert_eq!(bundles.len(), 1);
    assert_eq!(
        entry_ids(&bundles[0]),
        [ID906, ID90A, &format!("host-{HOST}-")[..]]
    );
    assert_eq!(bundles[0]["compressed"].is_null(), compress == "none");
    if compress != "none" {
        assert_eq!(bundles[0]["compressed"]["method"], compress);
    }
}

/// `inspect --json` of `out`: a bundle file with exactly the two targets.
fn check_inspect(dir: &Path, out: &str, compress: &str) {
    let v = json(&rw(dir, &["inspect", "--json", out]).success().stdout);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "bundle");
    assert_eq!(v["path"], out);
    assert!(v["wheel"].is_null());
    assert_eq!(v["elf_files"], serde_json::json!([]));
    let files = v["bundle_files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(
        files[0]["targets"],
        serde_json::json!({"gfx906": 1, "gfx90a": 1})
    );
    assert_eq!(files[0]["bundles"][0]["compression"], compress);
}

/// The reference tool reads what we wrote (`k.none.hipfb`) and agrees on
/// the contents; called the way clang's HIP driver calls it (host entry
/// `host-<triple>-`), it writes the very same bytes.
fn check_against_the_reference_tool(dir: &Path) {
    let listed = run_stdout(llvm_cmd("clang-offload-bundler").current_dir(dir).args([
        "-list",
        "-type=o",
        "-input=k.none.hipfb",
    ]));
    let mut listed: Vec<&str> = listed.lines().collect();
    listed.sort();
    assert_eq!(listed, [ID906, ID90A, &format!("host-{HOST}-")[..]]);
    run_stdout(llvm_cmd("clang-offload-bundler").current_dir(dir).args([
        "-unbundle",
        "-type=o",
        "-input=k.none.hipfb",
        &format!("-targets={ID90A}"),
        "-output=ref.gfx90a.co",
    ]));
    assert_eq!(
        std::fs::read(dir.join("ref.gfx90a.co")).unwrap(),
        std::fs::read(dir.join("k.gfx90a.co")).unwrap()
    );
    run_stdout(llvm_cmd("clang-offload-bundler").current_dir(dir).args([
        "-type=o",
        "-bundle-align=4096",
        &format!("-targets=host-{HOST}-,{ID906},{ID90A}"),
        "-input=/dev/null",
        "-input=k.gfx906.co",
        "-input=k.gfx90a.co",
        "-output=ref.hipfb",
    ]));
    assert!(
        std::fs::read(dir.join("ref.hipfb")).unwrap()
            == std::fs::read(dir.join("k.none.hipfb")).unwrap(),
        "bundle write differs from clang-offload-bundler"
    );
}

/// Compressed, both ways: the reference tool unbundles what `bundle write`
/// compressed, and `bundle list|extract` read what the tool compresses
/// (`-compress`, zstd, CCOB v2 by default and v3 on request).
fn check_compressed_both_ways(dir: &Path) {
    for compress in ["zstd", "zlib"] {
        run_stdout(llvm_cmd("clang-offload-bundler").current_dir(dir).args([
            "-unbundle",
            "-type=o",
            &format!("-input=k.{compress}.hipfb"),
            &format!("-targets={ID906}"),
            &format!("-output=ref.{compress}.gfx906.co"),
        ]));
        assert_eq!(
            std::fs::read(dir.join(format!("ref.{compress}.gfx906.co"))).unwrap(),
            std::fs::read(dir.join("k.gfx906.co")).unwrap(),
            "{compress}"
        );
    }
    for version in ["2", "3"] {
        let z = format!("ref.v{version}.hipfb");
        run_stdout(
            llvm_cmd("clang-offload-bundler")
                .current_dir(dir)
                .env("COMPRESSED_BUNDLE_FORMAT_VERSION", version)
                .args([
                    "-type=o",
                    "-bundle-align=4096",
                    "-compress",
                    &format!("-targets=host-{HOST}-,{ID906},{ID90A}"),
                    "-input=/dev/null",
                    "-input=k.gfx906.co",
                    "-input=k.gfx90a.co",
                    &format!("-output={z}"),
                ]),
        );
        let v = json(&rw(dir, &["bundle", "list", "--json", &z]).success().stdout);
        let c = &v["bundles"][0]["compressed"];
        assert_eq!(c["method"], "zstd", "v{version}: {v}");
        assert_eq!(c["version"].to_string(), version, "v{version}: {v}");
        // The same entries, at the same offsets, as our uncompressed bundle.
        let plain = json(
            &rw(dir, &["bundle", "list", "--json", "k.none.hipfb"])
                .success()
                .stdout,
        );
        assert_eq!(
            v["bundles"][0]["entries"], plain["bundles"][0]["entries"],
            "v{version}"
        );
        let x = format!("x.v{version}.co");
        rw(
            dir,
            &[
                "bundle", "extract", &z, "--target", "gfx90a", "--output", &x,
            ],
        )
        .success();
        assert_eq!(
            std::fs::read(dir.join(&x)).unwrap(),
            std::fs::read(dir.join("k.gfx90a.co")).unwrap(),
            "v{version}"
        );
    }
}

#[test]
fn extract_errors() {
    let d = setup();
    let dir = d.path();
    write(dir, "k.hipfb", "zstd").success();
    let before = snapshot(dir);
    rw(
        dir,
        &[
            "bundle", "extract", "k.hipfb", "--target", "gfx1100", "--output", "x.co",
        ],
    )
    .fails(
        1,
        "no entry for target `gfx1100`; targets present: gfx906, gfx90a",
    );
    rw(
        dir,
        &[
            "bundle", "extract", "k.hipfb", "--target", "gfx906", "--bundle", "1", "--output",
            "x.co",
        ],
    )
    .fails(1, "no entry for target `gfx906` in bundle 1");
    assert_unchanged(dir, &before);
}

#[test]
fn bad_bundles_fail_and_leave_files_alone() {
    let d = setup();
    let dir = d.path();
    write(dir, "k.hipfb", "none").success();
    write(dir, "z.hipfb", "zstd").success();
    let plain = std::fs::read(dir.join("k.hipfb")).unwrap();
    let packed = std::fs::read(dir.join("z.hipfb")).unwrap();
    // Cut inside the second code object; inside the entry table; inside
    // the compressed stream.
    std::fs::write(dir.join("cut-data.hipfb"), &plain[..plain.len() - 1000]).unwrap();
    std::fs::write(dir.join("cut-table.hipfb"), &plain[..100]).unwrap();
    std::fs::write(dir.join("cut-ccob.hipfb"), &packed[..40]).unwrap();
    let mut wrong = plain.clone();
    wrong[..8].copy_from_slice(b"__CLAMP_");
    std::fs::write(dir.join("magic.hipfb"), wrong).unwrap();
    std::fs::write(dir.join("zeros.hipfb"), vec![0u8; 8192]).unwrap();
    std::fs::write(dir.join("text.hipfb"), "hello\n").unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "cut-data.hipfb",
            "truncated or corrupt bundle: entry `hipv4-amdgcn-amd-amdhsa--gfx90a`",
        ),
        (
            "cut-table.hipfb",
            "corrupt bundle: entry count 3 cannot fit",
        ),
        ("cut-ccob.hipfb", "truncated compressed bundle"),
        (
            "magic.hipfb",
            "not an offload bundle: expected magic `__CLANG_OFFLOAD_BUNDLE__` or `CCOB`",
        ),
        ("zeros.hipfb", "not an offload bundle"),
        ("text.hipfb", "not an offload bundle"),
        ("missing.hipfb", "cannot read missing.hipfb"),
    ];
    let before = snapshot(dir);
    for (file, needle) in cases {
        rw(dir, &["bundle", "list", file]).fails(1, needle);
        rw(dir, &["bundle", "list", "--json", file]).fails(1, needle);
        rw(
            dir,
            &[
                "bundle", "extract", file, "--target", "gfx906", "--output", "x.co",
            ],
        )
        .fails(1, needle);
        assert_unchanged(dir, &before);
    }
}

/// `--entry` values `bundle write` refuses, with what the error says.
const BAD_ENTRIES: &[(&str, &str)] = &[
    (
        "hipv4-amdgcn-amd-amdhsa--gfx906=libhost.so",
        "ELF e_machine is 62, not EM_AMDGPU (224)",
    ),
    (
        "hipv4-amdgcn-amd-amdhsa--gfx906=k.hip",
        "k.hip: not an ELF file; expected an AMDGPU code object",
    ),
    // A bundle is not a code object either.
    (
        "hipv4-amdgcn-amd-amdhsa--gfx906=k.hipfb",
        "k.hipfb: not an ELF file",
    ),
    (
        "hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx906.co",
        "k.gfx906.co is a gfx906 code object",
    ),
    (
        "hipv4-amdgcn-amd-amdhsa--gfx906=missing.co",
        "cannot read code object missing.co",
    ),
    (
        "hipv4-amdgcn-amd-amdhsa--gfx906=rel.o",
        "rel.o is an unlinked AMDGPU object (ELF e_type 1), not a code object",
    ),
    ("gfx906", "is not ID=FILE"),
    (
        "gfx906=k.gfx906.co",
        "entry id `gfx906`: offload kind `gfx906` is not hip, hipv4 or openmp",
    ),
    (
        "hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx90a.co",
        "entry id `hipv4-amdgcn-amd-amdhsa--gfx90a` is given twice",
    ),
];

#[test]
fn write_refuses_bad_entries() {
    let d = setup();
    let dir = d.path();
    host_so(dir, "libhost.so");
    std::fs::write(dir.join("k.hip"), "__global__ void f() {}\n").unwrap();
    write(dir, "k.hipfb", "none").success();
    let mut rel = std::fs::read(dir.join("k.gfx906.co")).unwrap();
    rel[16] = 1; // e_type = ET_REL: an object the runtime cannot load
    std::fs::write(dir.join("rel.o"), rel).unwrap();
    std::fs::write(
        dir.join("cut.co"),
        &std::fs::read(dir.join("k.gfx906.co")).unwrap()[..60],
    )
    .unwrap();
    let before = snapshot(dir);
    let gfx90a = format!("{ID90A}=k.gfx90a.co");
    for (entry, needle) in BAD_ENTRIES {
        for compress in ["none", "zstd"] {
            let args = ["--compress", compress, "--host-triple", HOST];
            refused(
                dir,
                &before,
                &args,
                &["--entry", &gfx90a, "--entry", entry],
                needle,
            );
        }
    }
    // A truncated code object.
    let cut = format!("{ID906}=cut.co");
    refused(
        dir,
        &before,
        &["--host-triple", HOST],
        &["--entry", &cut],
        "cut.co",
    );
    let gfx906 = format!("{ID906}=k.gfx906.co");
    refused(
        dir,
        &before,
        &["--level", "3", "--host-triple", HOST],
        &["--entry", &gfx906],
        "--level needs --compress zstd or --compress zlib",
    );
    refuses_bad_levels(dir, &before);
    refuses_usage_errors(dir, &before);
}

/// Usage errors are clap's: exit 2, nothing written.
fn refuses_usage_errors(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>) {
    for (argv, needle) in [
        (
            &[
                "bundle",
                "write",
                "--output",
                "o.hipfb",
                "--host-triple",
                HOST,
            ][..],
            "--entry",
        ),
        (
            &[
                "bundle",
                "write",
                "--output",
                "o.hipfb",
                "--host-triple",
                HOST,
                "--compress",
                "lz4",
                "--entry",
                "x=y",
            ][..],
            "invalid value 'lz4'",
        ),
        (
            &["bundle", "write", "--output", "o.hipfb", "--entry", "x=y"][..],
            "--host-triple",
        ),
    ] {
        rw(dir, argv).fails(2, needle);
        assert_unchanged(dir, before);
    }
}

/// `bundle write --output out.hipfb FLAGS ENTRIES` fails (exit 1) with
/// `needle` and leaves `dir` as it was.
fn refused(
    dir: &Path,
    before: &BTreeMap<PathBuf, Vec<u8>>,
    flags: &[&str],
    entries: &[&str],
    needle: &str,
) {
    let mut argv = vec!["bundle", "write", "--output", "out.hipfb"];
    argv.extend_from_slice(flags);
    argv.extend_from_slice(entries);
    rw(dir, &argv).fails(1, needle);
    assert_unchanged(dir, before);
}

/// Levels the method does not have.
fn refuses_bad_levels(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>) {
    let gfx906 = format!("{ID906}=k.gfx906.co");
    for (compress, level, needle) in [
        (
            "zstd",
            "0",
            "zstd compression level 0 is out of range 1..=22",
        ),
        (
            "zstd",
            "23",
            "zstd compression level 23 is out of range 1..=22",
        ),
        (
            "zstd",
            "-5",
            "zstd compression level -5 is out of range 1..=22",
        ),
        (
            "zlib",
            "10",
            "zlib compression level 10 is out of range 0..=9",
        ),
    ] {
        let level = format!("--level={level}");
        let flags = ["--compress", compress, &level, "--host-triple", HOST];
        refused(dir, before, &flags, &["--entry", &gfx906], needle);
    }
}

#[test]
fn hip_shared_object_carries_the_bundle() {
    let d = setup();
    let dir = d.path();
    write(dir, "k.hipfb", "zstd").success();
    hip_so(dir, "k.hipfb", "libk.so");
    let listing = rw(dir, &["bundle", "list", "libk.so"]).success().stdout;
    let v = json(
        &rw(dir, &["bundle", "list", "--json", "libk.so"])
            .success()
            .stdout,
    );
    assert_eq!(
        entry_ids(&v["bundles"][0]),
        [ID906, ID90A, &format!("host-{HOST}-")[..]]
    );
    assert_eq!(v["bundles"][0]["compressed"]["method"], "zstd");

    rw(
        dir,
        &[
            "bundle", "extract", "libk.so", "--target", "gfx906", "--output", "x.co",
        ],
    )
    .success();
    assert_eq!(
        std::fs::read(dir.join("x.co")).unwrap(),
        std::fs::read(dir.join("k.gfx906.co")).unwrap()
    );

    // A long RUNPATH makes rpath grow the file; the GPU code must survive.
    let runpath = "$ORIGIN/../rocm/lib:$ORIGIN/../../jax_plugins/xla_rocm7/rocm/lib:$ORIGIN";
    rw(dir, &["rpath", "set", "libk.so", "--rpath", runpath]).success();
    assert_eq!(
        rw(dir, &["bundle", "list", "libk.so"]).success().stdout,
        listing,
        "rpath set changed the .hip_fatbin section"
    );
    let v = json(&rw(dir, &["inspect", "--json", "libk.so"]).success().stdout);
    assert_eq!(v["kind"], "elf");
    let elf = &v["elf_files"][0];
    assert_eq!(elf["path"], "libk.so");
    assert_eq!(elf["type"], "shared object");
    assert_eq!(elf["machine"], "x86-64");
    assert_eq!(
        elf["runpath"],
        serde_json::json!(runpath.split(':').collect::<Vec<_>>())
    );
    assert_eq!(
        elf["targets"],
        serde_json::json!({"gfx906": 1, "gfx90a": 1})
    );
    assert_eq!(elf["bundles"][0]["compression"], "zstd");
}

#[test]
fn elf_without_hip_fatbin() {
    let d = tempdir();
    let dir = d.path();
    host_so(dir, "libplain.so");
    let text = rw(dir, &["bundle", "list", "libplain.so"]).success().stdout;
    assert_eq!(text, "libplain.so: no .hip_fatbin section\n");
    let v = json(
        &rw(dir, &["bundle", "list", "--json", "libplain.so"])
            .success()
            .stdout,
    );
    assert_eq!(v, serde_json::json!({"bundles": []}));
    let before = snapshot(dir);
    rw(
        dir,
        &[
            "bundle",
            "extract",
            "libplain.so",
            "--target",
            "gfx906",
            "--output",
            "x.co",
        ],
    )
    .fails(1, "no entry for target `gfx906`; targets present: none");
    assert_unchanged(dir, &before);
}

#[test]
fn write_into_unwritable_directory() {
    use std::os::unix::fs::PermissionsExt;
    let d = setup();
    let dir = d.path();
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(dir);
    let out = run_without_dac_override(
        dir,
        &ro,
        &[
            "bundle",
            "write",
            "--output",
            "ro/k.hipfb",
            "--host-triple",
            HOST,
            "--entry",
            &format!("{ID906}=k.gfx906.co"),
        ],
    );
    let after = snapshot(dir);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    out.fails(1, "cannot create a temporary file in ro");
    assert_eq!(after, before);
    rw(
        dir,
        &[
            "bundle",
            "write",
            "--output",
            "nodir/k.hipfb",
            "--host-triple",
            HOST,
            "--entry",
            &format!("{ID906}=k.gfx906.co"),
        ],
    )
    .fails(1, "cannot create a temporary file in nodir");
    assert_unchanged(dir, &before);
}

#[test]
fn write_refuses_truncated_code_objects() {
    let d = setup();
    let dir = d.path();
    let co = std::fs::read(dir.join("k.gfx906.co")).unwrap();
    std::fs::write(dir.join("half.co"), &co[..co.len() / 2]).unwrap();
    std::fs::write(dir.join("head.co"), &co[..60]).unwrap();
    let before = snapshot(dir);
    for file in ["half.co", "head.co"] {
        rw(
            dir,
            &[
                "bundle",
                "write",
                "--output",
                "out.hipfb",
                "--host-triple",
                HOST,
                "--entry",
                &format!("{ID906}={file}"),
            ],
        )
        .fails(1, "truncated");
        assert_unchanged(dir, &before);
    }
}
