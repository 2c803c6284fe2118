//! Hostile kpack inputs, each in the shape that once broke a promise and at
//! a size that proves the bound: every run of the binary here holds
//! [`RSS_MAX_MIB`] of peak memory and [`CPU_MAX`] of CPU time, with no
//! usable `$TMPDIR` (any scratch file would fail the run: scratch disk use
//! is nil), and leaves nothing behind but its declared outputs.
//!
//! The host library is assembled, not compiled: its `.hipFatBinSegment`
//! holds as many `HIPK` wrappers as a test wants, each relocated
//! (R_X86_64_RELATIVE) to one marker in `.rocm_kpack_ref`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ::kpack::archive::{MAX_ARCHIVE_CODE, MAX_KERNEL_SIZE};
use ::kpack::msgpack::Encoder;

use crate::hardening::rw_usage_env;
use crate::*;

const HOST: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";
const DEV: &str = "demo_device_gfx1201-1.0-py3-none-manylinux_2_17_x86_64.whl";
const KERNEL_NAME: &str = "demo/k.hip";
const KERNEL: &[u8] = b"a code object, as far as the tables are concerned";
const MIB: usize = 1 << 20;

/// Peak RSS of any run here; inputs are at most 64 MiB.
const RSS_MAX_MIB: u64 = 256;
/// Ten seconds of a quiet 2-core machine's wall time, as CPU time (user +
/// system): the quadratic cases took minutes, and CPU time does not grow
/// when `make test` runs other builds beside these tests.
const CPU_MAX: Duration = Duration::from_secs(10);

/// Runs the binary in `dir` with `$TMPDIR` pointing nowhere, asserting the
/// bounds and no panic; returns the exit code and stderr.
fn bounded(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let u = rw_usage_env(dir, args, &[("TMPDIR", "/nonexistent/scratch")]);
    let (code, err, rss, cpu) = (u.code, u.stderr, u.rss_mib, u.cpu);
    eprintln!("{args:?}: exit {code:?}, peak RSS {rss} MiB, CPU {cpu:.2?}");
    assert!(rss <= RSS_MAX_MIB, "{args:?}: peak RSS {rss} MiB: {err}");
    assert!(cpu <= CPU_MAX, "{args:?}: {cpu:?} of CPU time: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (code, err)
}

#[track_caller]
fn bounded_ok(dir: &Path, args: &[&str]) {
    let (code, err) = bounded(dir, args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
}

#[track_caller]
fn bounded_refusal(dir: &Path, args: &[&str], needle: &str) {
    let (code, err) = bounded(dir, args);
    assert!(
        matches!(code, Some(1) | Some(2)),
        "{args:?}: exit {code:?}: {err}"
    );
    assert!(err.contains(needle), "{args:?}: {needle:?} not in: {err}");
}

/// A marker naming [`KERNEL_NAME`] with the usual search path and then
/// `empty` empty ones (the loader skips nothing: they all miss).
fn marker(empty: usize) -> Vec<u8> {
    let mut e = Encoder::default();
    e.map(2).str("kpack_search_paths").array(1 + empty);
    e.str(".kpack/@GFXARCH@.kpack");
    e.buf.extend(std::iter::repeat_n(0xa0u8, empty));
    e.str("kernel_name").str(KERNEL_NAME);
    e.buf
}

/// `dir/HOST`: demo/libk.so with `wrappers` HIPK wrappers all pointing at
/// the first of `copies` copies of `marker`.
fn host_wheel(dir: &Path, wrappers: usize, marker: &[u8], copies: usize) -> PathBuf {
    std::fs::write(dir.join("marker.bin"), marker).unwrap();
    std::fs::write(
        dir.join("k.s"),
        format!(
            ".section .rocm_kpack_ref,\"a\",@progbits\n\
             kpack_marker:\n\
             .rept {copies}\n.incbin \"marker.bin\"\n.endr\n\
             .section .hipFatBinSegment,\"aw\",@progbits\n\
             .p2align 3\n\
             .rept {wrappers}\n\
             .long 0x4B504948\n.long 1\n.quad kpack_marker\n.long 0\n.long 0\n\
             .endr\n"
        ),
    )
    .unwrap();
    run_stdout(llvm_cmd("clang").current_dir(dir).args([
        "-shared",
        "-nostdlib",
        "-fuse-ld=lld",
        "-o",
        "libk.so",
        "k.s",
    ]));
    let so = std::fs::read(dir.join("libk.so")).unwrap();
    make_wheel_requiring(dir, HOST, false, &[("demo/libk.so", so)], HOST_REQUIRES)
}

/// The host's device extras: what makes a device wheel its own.
const HOST_REQUIRES: &[&str] = &[
    "demo-device-gfx1201==1.0; extra == \"device-gfx1201\"",
    "demo-device-gfx12==1.0; extra == \"device-all\"",
];

/// A `none` archive serving `targets` (the first holds [`KERNEL`] as
/// `KERNEL_NAME#0`; the others name the same stored kernel under other
/// keys), with `junk` one-byte integers in its TOC under a key the loader
/// ignores.
fn archive(targets: &[String], junk: usize) -> Vec<u8> {
    let mut e = Encoder::default();
    e.map(if junk > 0 { 8 } else { 7 });
    e.str("format_version").uint(1);
    e.str("group_name").str("demo");
    e.str("gfx_arch_family").str(&targets[0]);
    e.str("gfx_arches").array(targets.len());
    for t in targets {
        e.str(t);
    }
    e.str("toc").map(targets.len());
    for (i, t) in targets.iter().enumerate() {
        let key = if i == 0 {
            format!("{KERNEL_NAME}#0")
        } else {
            format!("other/{i}.hip#0")
        };
        e.str(&key).map(1).str(t).map(3);
        e.str("type").str("hsaco").str("ordinal").uint(0);
        e.str("original_size").uint(KERNEL.len() as u64);
    }
    e.str("compression_scheme").str("none");
    e.str("blobs").array(1).map(2).str("offset").uint(64);
    e.str("size").uint(KERNEL.len() as u64);
    if junk > 0 {
        e.str("junk").array(junk);
        e.buf.extend(std::iter::repeat_n(1u8, junk));
    }
    let toc_offset = 64 + KERNEL.len() as u64;
    let mut out = b"KPAK".to_vec();
    out.extend(1u32.to_le_bytes());
    out.extend(toc_offset.to_le_bytes());
    out.resize(64, 0);
    out.extend(KERNEL);
    out.extend(e.buf);
    out
}

/// `thin --gfx gfx1201 HOST -o out/HOST` with each of `devices`.
fn thin_args<'a>(o: &'a str, devices: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["thin", "--gfx", "gfx1201", HOST, "-o", o];
    for w in devices {
        args.extend(["--device-wheel", *w]);
    }
    args
}

/// `dir/name`: a device wheel of `demo` 1.0 (pinning it) installing each
/// (path, archive).
fn device_wheel(dir: &Path, name: &str, archives: &[(&str, Vec<u8>)]) -> PathBuf {
    make_wheel_requiring(dir, name, false, archives, &["demo==1.0"])
}

fn gfx1201() -> Vec<String> {
    vec!["gfx1201".into()]
}

const ARCHIVE_PATH: &str = "demo/.kpack/gfx1201.kpack";

/// A device wheel whose archive's TOC is 64 MiB of small integers: every
/// reader holds the TOC's bytes and not a decoded value per byte (once
/// 32 times the input: 2.2 GB), streams the member instead of copying it
/// to `$TMPDIR`, and the answer is still right.
#[test]
fn a_64_mib_toc_of_small_integers_costs_its_bytes() {
    let d = tempdir();
    let dir = d.path();
    host_wheel(dir, 1, &marker(0), 1);
    let kpack = archive(&gfx1201(), 64 * MIB - 512);
    assert!(kpack.len() - 64 - KERNEL.len() <= 64 * MIB);
    std::fs::write(dir.join("a.kpack"), &kpack).unwrap();
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, kpack)]);
    std::fs::create_dir(dir.join("out")).unwrap();
    bounded_ok(dir, &["check", HOST, "--device-wheel", DEV]);
    bounded_ok(dir, &["inspect", DEV]);
    bounded_ok(dir, &["kpack", "list", "a.kpack"]);
    let o = format!("out/{HOST}");
    bounded_ok(dir, &thin_args(&o, &[DEV]));
    assert_eq!(
        file_names(&dir.join("out")),
        vec![HOST.to_string(), DEV.to_string()]
    );
}

/// 100,000 wrappers sharing one marker of 65,000 empty search paths, in a
/// section of 400 such markers: the marker is decoded once and its
/// repeated paths kept once (each wrapper decoding its own copy took 2.4 GB
/// for 1,600 wrappers; `inspect` listing every empty path took 1.7 GB and
/// printed 130 MB), and each wrapper's relocation is found in a map (a
/// linear scan per wrapper took 7 s).
#[test]
fn wrappers_sharing_a_bloated_marker_cost_one_marker() {
    let d = tempdir();
    let dir = d.path();
    let m = marker(65_000);
    assert!(m.len() <= 64 << 10);
    host_wheel(dir, 100_000, &m, 400);
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, archive(&gfx1201(), 0))]);
    bounded_ok(dir, &["check", HOST, "--device-wheel", DEV]);
    let out = rw(dir, &["check", HOST, "--device-wheel", DEV]).success();
    assert!(
        out.stdout.contains("ok: 100000 kpack references"),
        "{}",
        out.stdout
    );
    bounded_ok(dir, &["inspect", "--json", HOST]);
    let out = rw(dir, &["inspect", "--json", HOST]).success();
    assert!(out.stdout.len() < MIB, "{} bytes", out.stdout.len());
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let markers = &report["elf_files"][0]["kpack_markers"];
    assert_eq!(markers.as_array().map(Vec::len), Some(400), "{report}");
    assert_eq!(
        markers[0]["search_paths"],
        serde_json::json!([".kpack/@GFXARCH@.kpack", ""])
    );
}

/// A TOC of 50,000 targets, each with one kernel: validating it and
/// checking a set against it take time linear in it (a linear search of
/// the target list per kernel ran for minutes).
#[test]
fn a_toc_of_many_targets_is_indexed() {
    let d = tempdir();
    let dir = d.path();
    host_wheel(dir, 1, &marker(0), 1);
    let mut targets = gfx1201();
    targets.extend((0..50_000).map(|i| format!("gfx{i}x")));
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, archive(&targets, 0))]);
    bounded_ok(
        dir,
        &["check", HOST, "--device-wheel", DEV, "--gfx", "gfx1201"],
    );
    bounded_ok(dir, &["inspect", DEV]);
}

/// Sets that are not one host's, or that collide, are refused before
/// anything is written: foreign or other-version device wheels, one file
/// name given twice, one archive installed by two wheels, and an output
/// taken by a directory (which once left the host's copy behind).
#[test]
fn sets_that_collide_or_are_foreign_are_refused_whole() {
    let d = tempdir();
    let dir = d.path();
    host_wheel(dir, 1, &marker(0), 1);
    let a = || archive(&gfx1201(), 0);
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, a())]);
    let foreign = "other_device_gfx1201-1.0-py3-none-manylinux_2_17_x86_64.whl";
    device_wheel(dir, foreign, &[(ARCHIVE_PATH, a())]);
    let old = "demo_device_gfx1201-0.9-py3-none-manylinux_2_17_x86_64.whl";
    device_wheel(dir, old, &[(ARCHIVE_PATH, a())]);
    let family = "demo_device_gfx12-1.0-py3-none-manylinux_2_17_x86_64.whl";
    device_wheel(dir, family, &[(ARCHIVE_PATH, a())]);
    std::fs::create_dir(dir.join("b")).unwrap();
    device_wheel(&dir.join("b"), DEV, &[(ARCHIVE_PATH, a())]);
    let twin = format!("b/{DEV}");
    // The host requires it, but it does not pin the host.
    std::fs::create_dir(dir.join("c")).unwrap();
    make_wheel(&dir.join("c"), DEV, false, &[(ARCHIVE_PATH, a())]);
    let unpinned = format!("c/{DEV}");
    for (devices, needle) in [
        (vec![foreign], "not a device wheel of demo"),
        (vec![unpinned.as_str()], "does not require demo==1.0"),
        (vec![old], "is not the device wheel demo 1.0 requires"),
        (vec![DEV, twin.as_str()], "have one file name"),
        (vec![DEV, family], "both install demo/.kpack/gfx1201.kpack"),
    ] {
        let mut args = vec!["check", HOST];
        for w in &devices {
            args.extend(["--device-wheel", *w]);
        }
        bounded_refusal(dir, &args, needle);
        std::fs::create_dir(dir.join("out")).unwrap();
        let o = format!("out/{HOST}");
        bounded_refusal(dir, &thin_args(&o, &devices), needle);
        assert_empty_dir(&dir.join("out"));
        std::fs::remove_dir(dir.join("out")).unwrap();
    }
    // The device wheel's name is taken by a directory in the output.
    std::fs::create_dir_all(dir.join("out").join(DEV)).unwrap();
    let o = format!("out/{HOST}");
    bounded_refusal(dir, &thin_args(&o, &[DEV]), "is a directory");
    assert_eq!(file_names(&dir.join("out")), vec![DEV.to_string()]);
    // Negative control: the set itself is fine, and so is the host's
    // version spelled with a zero more (PEP 440, as device-extras judges it).
    std::fs::remove_dir(dir.join("out").join(DEV)).unwrap();
    bounded_ok(dir, &thin_args(&o, &[DEV]));
    let padded = "demo_device_gfx1201-1.0.0-py3-none-manylinux_2_17_x86_64.whl";
    device_wheel(dir, padded, &[(ARCHIVE_PATH, a())]);
    bounded_ok(dir, &["check", HOST, "--device-wheel", padded]);
}

/// Kernel frames are decompressed under their declared size, as the loader
/// will: a garbage frame, or one of another size, is refused, naming the
/// wheel member (not a temporary file).
#[test]
fn kernel_frames_must_decompress_to_their_size() {
    let d = tempdir();
    let dir = d.path();
    host_wheel(dir, 1, &marker(0), 1);
    std::fs::write(dir.join("k.co"), vec![7u8; 4096]).unwrap();
    let kernel = format!("{KERNEL_NAME}#0@gfx1201=k.co");
    rw(
        dir,
        &[
            "kpack", "archive", "--group", "demo", "--family", "gfx1201", "--target", "gfx1201",
            "--kernel", &kernel, "--output", "z.kpack",
        ],
    )
    .success();
    let good = std::fs::read(dir.join("z.kpack")).unwrap();
    // zstd-per-kernel: count at 64, then the first frame's length and bytes.
    let len = u32::from_le_bytes(good[68..72].try_into().unwrap()) as usize;
    let mut garbage = good.clone();
    garbage[72..72 + len].fill(0xee);
    // The TOC's original_size (4096, uint16 0xcd 0x10 0x00) claims 4097.
    let mut larger = good.clone();
    let at = larger
        .windows(3)
        .rposition(|w| w == [0xcd, 0x10, 0x00])
        .unwrap();
    larger[at + 2] = 0x01;
    for (kpack, needle) in [
        (garbage, "does not decompress"),
        (larger, "the TOC says 4097"),
    ] {
        device_wheel(dir, DEV, &[(ARCHIVE_PATH, kpack)]);
        let (code, err) = bounded(dir, &["check", HOST, "--device-wheel", DEV]);
        assert!(code != Some(0), "{err}");
        assert!(err.contains(needle), "{needle:?} not in: {err}");
        assert!(
            err.contains(&format!("{DEV}: {ARCHIVE_PATH}")) && !err.contains("/tmp"),
            "{err}"
        );
    }
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, good)]);
    bounded_ok(dir, &["check", HOST, "--device-wheel", DEV]);
}

/// A host binary whose PT_LOAD holding the markers claims file bytes past
/// the end of the file: `check` names the member and the problem (no
/// panic: this binary is a debug build, where the overflowing subtraction
/// this once was panics).
#[test]
fn a_load_past_the_end_of_the_file_is_a_clear_error() {
    let d = tempdir();
    let dir = d.path();
    host_wheel(dir, 1, &marker(0), 1);
    device_wheel(dir, DEV, &[(ARCHIVE_PATH, archive(&gfx1201(), 0))]);
    bounded_ok(dir, &["check", HOST, "--device-wheel", DEV]);
    let mut so = std::fs::read(dir.join("libk.so")).unwrap();
    first_load_past_the_end(&mut so);
    make_wheel_requiring(dir, HOST, false, &[("demo/libk.so", so)], HOST_REQUIRES);
    bounded_refusal(
        dir,
        &["check", HOST, "--device-wheel", DEV],
        &format!("{HOST}: demo/libk.so: HIPK wrapper 0: marker offset"),
    );
}

/// `kpack archive --output out/a.kpack` of `kernels` (`KEY=FILE`, each
/// for gfx1201).
fn archive_args(kernels: &[String]) -> Vec<&str> {
    let mut args = vec![
        "kpack", "archive", "--group", "demo", "--family", "gfx1201", "--target", "gfx1201",
    ];
    for k in kernels {
        args.extend(["--kernel", k.as_str()]);
    }
    args.extend(["--output", "out/a.kpack"]);
    args
}

/// `kpack archive` sizes every kernel file before it reads or writes
/// anything: a device (`/dev/zero` once was read until allocation
/// failed), a file above [`MAX_KERNEL_SIZE`], and files above
/// [`MAX_ARCHIVE_CODE`] together (an archive readers would refuse) are
/// refused unread. The large files are sparse: their gigabytes cost
/// nothing to make, and a run that read them would break the memory bound.
#[test]
fn kernel_files_are_sized_before_they_are_read() {
    let d = tempdir();
    let dir = d.path();
    std::fs::create_dir(dir.join("out")).unwrap();
    std::fs::write(dir.join("k.co"), KERNEL).unwrap();
    let sparse = |name: &str, len: u64| {
        std::fs::File::create(dir.join(name))
            .unwrap()
            .set_len(len)
            .unwrap();
        name.to_string()
    };
    let huge = sparse("huge.co", MAX_KERNEL_SIZE + 1);
    let thirds: Vec<String> = (0..3)
        .map(|i| sparse(&format!("third{i}.co"), MAX_ARCHIVE_CODE / 3 + 1))
        .collect();
    let cases: [(Vec<&str>, String); 3] = [
        (vec!["/dev/zero"], "/dev/zero: not a regular file".into()),
        (
            vec![&huge],
            format!(
                "huge.co: {} bytes exceed {MAX_KERNEL_SIZE}",
                MAX_KERNEL_SIZE + 1
            ),
        ),
        (
            thirds.iter().map(String::as_str).collect(),
            format!(
                "the kernels hold {} bytes in all, more than the {MAX_ARCHIVE_CODE}",
                KERNEL.len() as u64 + 3 * (MAX_ARCHIVE_CODE / 3 + 1)
            ),
        ),
    ];
    for (files, needle) in cases {
        let mut kernels = vec![format!("{KERNEL_NAME}#0@gfx1201=k.co")];
        kernels.extend(
            (files.iter().enumerate()).map(|(i, f)| format!("other/{i}.hip#0@gfx1201={f}")),
        );
        bounded_refusal(dir, &archive_args(&kernels), &needle);
        assert_empty_dir(&dir.join("out"));
    }
    // Negative control: the small kernel alone is written.
    let kernels = [format!("{KERNEL_NAME}#0@gfx1201=k.co")];
    bounded_ok(dir, &archive_args(&kernels));
    assert_eq!(file_names(&dir.join("out")), ["a.kpack"]);
}
