//! Thinning wheels that hold real HIP shared objects: what is kept, what
//! stays byte-identical, the bundle formats, renaming, generic targets and
//! the refusals (nothing written). The wheels are made by wheel-writer,
//! the bundles by offload-bundle, and the results read back by
//! wheel-inspect and checked with LLVM's tools.

use offload_bundle::{write_bundle_file, Compression, Method, WriteRequest};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use test_support::*;
use wheel_thin::{Report, Request};

const WHEEL: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";
const ID906: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const ID90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";
const ID942: &str = "hipv4-amdgcn-amd-amdhsa--gfx942";
const ID1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";
const ID12G: &str = "hipv4-amdgcn-amd-amdhsa--gfx12-generic";

/// A bundle of `ids` (code objects k.<gfx>.co in `dir`) written as `out`,
/// `compress` being none, zstd or zlib (CCOB version 2).
fn bundle(dir: &Path, out: &str, compress: &str, ids: &[&str]) {
    let method = match compress {
        "none" => None,
        "zstd" => Some(Method::Zstd),
        "zlib" => Some(Method::Zlib),
        c => panic!("no compression {c}"),
    };
    write_bundle_file(&WriteRequest {
        output: dir.join(out),
        host_triple: HOST.into(),
        entries: ids
            .iter()
            .map(|id| (id.to_string(), dir.join(format!("k.{}.co", gfx_of(id)))))
            .collect(),
        compression: match method {
            None => Compression::None,
            Some(method) => Compression::Compressed {
                method,
                version: 2,
                level: None,
            },
        },
    })
    .unwrap();
}

/// Builds `dir/out`, a wheel of `distribution` 1.0 holding `files`
/// (archive path, source file in `dir`).
fn build_wheel(dir: &Path, distribution: &str, files: &[(&str, &str)], out: &str) -> PathBuf {
    build_wheel_requiring(dir, distribution, files, out, &[])
}

/// [`build_wheel`] whose METADATA requires each of `requires`
/// (`(name==version, extra)`), under that extra (none for "").
fn build_wheel_requiring(
    dir: &Path,
    distribution: &str,
    files: &[(&str, &str)],
    out: &str,
    requires: &[(&str, &str)],
) -> PathBuf {
    let requires_dist: Vec<String> = (requires.iter())
        .map(|(r, e)| match *e {
            "" => r.to_string(),
            e => format!("{r}; extra == \"{e}\""),
        })
        .collect();
    let mut extras: Vec<&str> = (requires.iter().map(|(_, e)| *e))
        .filter(|e| !e.is_empty())
        .collect();
    extras.dedup();
    let files: Vec<Value> = files
        .iter()
        .map(|(path, src)| json!({"path": path, "src": dir.join(src)}))
        .collect();
    let m = json!({
        "distribution": distribution, "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"], "files": files,
        "metadata": {"requires_dist": requires_dist, "provides_extra": extras},
    });
    let m = wheel_writer::Manifest::from_json(&m.to_string()).unwrap();
    let out = dir.join(out);
    wheel_writer::build(&m, &out, &wheel_writer::Options::default()).unwrap();
    out
}

/// Builds `dir/WHEEL` (distribution demo) from `files`.
fn build(dir: &Path, files: &[(String, String)]) -> PathBuf {
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, s)| (p.as_str(), s.as_str()))
        .collect();
    build_wheel(dir, "demo", &files, WHEEL)
}

/// A wheel with `sos` (name, bundle ids, compression) as shared objects
/// under demo/, plus a Python file.
fn wheel(dir: &Path, sos: &[(&str, &[&str], &str)]) -> PathBuf {
    for id in sos.iter().flat_map(|(_, ids, _)| ids.iter()) {
        let gfx = gfx_of(id);
        copy_in(&code_object(gfx), dir, &format!("k.{gfx}.co"));
    }
    std::fs::write(dir.join("__init__.py"), "").unwrap();
    let mut files = vec![("demo/__init__.py".to_string(), "__init__.py".to_string())];
    for (name, ids, compress) in sos {
        bundle(dir, "k.hipfb", compress, ids);
        hip_so(dir, "k.hipfb", name);
        files.push((format!("demo/{name}"), name.to_string()));
    }
    build(dir, &files)
}

/// Thins `dir/input` to keep `gfx` into `dir/output`.
fn thin(dir: &Path, gfx: &str, input: &str, output: &str) -> anyhow::Result<Report> {
    thin_with(dir, gfx, None, input, output, &[])
}

/// [`thin`], renaming the distribution (`name_suffix`) or choosing among
/// `device_wheels` (files in `dir`).
fn thin_with(
    dir: &Path,
    gfx: &str,
    name_suffix: Option<&str>,
    input: &str,
    output: &str,
    device_wheels: &[&str],
) -> anyhow::Result<Report> {
    let device_wheels: Vec<PathBuf> = device_wheels.iter().map(|w| dir.join(w)).collect();
    wheel_thin::thin(&Request {
        input: &dir.join(input),
        output: &dir.join(output),
        gfx,
        name_suffix,
        device_wheels: &device_wheels,
    })
}

/// `thin` refuses with an error containing `needle`.
#[track_caller]
fn refused(r: anyhow::Result<Report>, needle: &str) {
    let e = format!("{:#}", r.expect_err("thinning should have been refused"));
    assert!(e.contains(needle), "{needle:?} not in: {e}");
}

/// wheel-inspect's JSON report of `dir/whl` (which verifies every RECORD
/// hash and size).
fn inspect(dir: &Path, whl: &str) -> Value {
    serde_json::from_str(&wheel_inspect::inspect(&dir.join(whl)).unwrap().to_json()).unwrap()
}

/// The code object for `target` in the offload bundle(s) of the file `so`.
fn extract(so: &Path, target: &str) -> Vec<u8> {
    let data = std::fs::read(so).unwrap();
    let (b, i) = offload_bundle::find_file_entry(&data, target, None).unwrap();
    b.entry_data(&b.entries[i]).to_vec()
}

/// (offset, size) of .hip_fatbin, by readelf.
fn fatbin_range(so: &Path) -> (usize, usize) {
    let out = run_stdout(llvm_cmd("llvm-readelf").args(["-S", "--wide"]).arg(so));
    let line = out.lines().find(|l| l.contains(" .hip_fatbin ")).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    let i = f.iter().position(|x| *x == ".hip_fatbin").unwrap();
    (
        usize::from_str_radix(f[i + 3], 16).unwrap(),
        usize::from_str_radix(f[i + 4], 16).unwrap(),
    )
}

/// The entry ids (sorted) clang-offload-bundler lists for the first bundle
/// of `so`'s `.hip_fatbin`, cut out with llvm-objcopy.
fn reference_listing(dir: &Path, so: &str) -> Vec<String> {
    run_stdout(llvm_cmd("llvm-objcopy").current_dir(dir).args([
        "--dump-section",
        ".hip_fatbin=fb.bin",
        so,
        "/dev/null",
    ]));
    let fb = std::fs::read(dir.join("fb.bin")).unwrap();
    let first = &offload_bundle::read_file_bundles(&fb).unwrap()[0];
    let (o, n) = (first.start as usize, first.len as usize);
    std::fs::write(dir.join("one.bundle"), &fb[o..o + n]).unwrap();
    let ids = run_stdout(llvm_cmd("clang-offload-bundler").current_dir(dir).args([
        "-list",
        "-type=o",
        "-input=one.bundle",
    ]));
    let mut ids: Vec<String> = ids.lines().map(str::to_string).collect();
    ids.sort();
    ids
}

#[test]
fn keeps_only_the_requested_targets_in_place() {
    for compress in ["zstd", "zlib", "none"] {
        let d = tempdir();
        let dir = d.path();
        wheel(dir, &[("libk.so", &[ID906, ID90A], compress)]);
        std::fs::create_dir(dir.join("out")).unwrap();
        let out = format!("out/{WHEEL}");
        let report = thin(dir, "gfx90a-dcgpu", WHEEL, &out).unwrap().to_human();
        assert!(
            report.contains("kept gfx90a; dropped 1 code objects"),
            "{report}"
        );
        let v = inspect(dir, &out);
        let elf = &v["elf_files"][0];
        assert_eq!(elf["targets"], json!({"gfx90a": 1}), "{compress}");
        let fat = inspect(dir, WHEEL);
        let (b, f) = (&elf["bundles"][0], &fat["elf_files"][0]["bundles"][0]);
        assert_eq!(b["compression"], f["compression"], "{compress}");
        assert_eq!(b["format_version"], f["format_version"], "{compress}");
        assert_eq!(b["offset"], f["offset"], "{compress}");

        // The code object kept is the original; nothing outside
        // .hip_fatbin moved or changed.
        let (a, t) = (
            member(&dir.join(WHEEL), "demo/libk.so"),
            member(&dir.join(&out), "demo/libk.so"),
        );
        std::fs::write(dir.join("thin.so"), &t).unwrap();
        assert_eq!(
            extract(&dir.join("thin.so"), "gfx90a"),
            std::fs::read(dir.join("k.gfx90a.co")).unwrap()
        );
        let (off, size) = fatbin_range(&dir.join("libk.so"));
        assert_eq!(a.len(), t.len());
        assert_eq!(a[..off], t[..off], "{compress}: bytes before .hip_fatbin");
        assert_eq!(a[off + size..], t[off + size..], "{compress}: after it");
        assert_ne!(a, t, "{compress}: the section did not change");
        // clang-offload-bundler reads the bundle cut out of the section.
        let ids = reference_listing(dir, "thin.so");
        assert_eq!(ids, [ID90A, "host-x86_64-unknown-linux-gnu-"], "{compress}");
        // Reproducible.
        std::fs::create_dir(dir.join("again")).unwrap();
        let again = format!("again/{WHEEL}");
        thin(dir, "gfx90a", WHEEL, &again).unwrap();
        assert_eq!(
            std::fs::read(dir.join(&out)).unwrap(),
            std::fs::read(dir.join(&again)).unwrap()
        );
    }
}

#[test]
fn renames_the_distribution() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID906, ID90A], "zstd")]);
    let out = "demo_gfx90a_dcgpu-1.0-py3-none-manylinux_2_17_x86_64.whl";
    let renamed = |o: &str| thin_with(dir, "gfx90a-dcgpu", Some("gfx90a-dcgpu"), WHEEL, o, &[]);
    refused(
        renamed("wrong-1.0-py3-none-any.whl"),
        &format!("the output must be named {out}"),
    );
    renamed(out).unwrap();
    let v = inspect(dir, out);
    assert_eq!(v["wheel"]["name"], "demo-gfx90a-dcgpu");
    let meta = String::from_utf8(member(
        &dir.join(out),
        "demo_gfx90a_dcgpu-1.0.dist-info/METADATA",
    ))
    .unwrap();
    assert!(meta.contains("\nName: demo-gfx90a-dcgpu\n"), "{meta}");
}

#[test]
fn refusals_leave_no_output() {
    let d = tempdir();
    let dir = d.path();
    wheel(
        dir,
        &[
            ("liba.so", &[ID906, ID90A], "zstd"),
            ("libb.so", &[ID906], "zstd"),
        ],
    );
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = format!("out/{WHEEL}");
    let cases: &[(&str, &str)] = &[
        (
            "gfx1100",
            "no bundle of demo-1.0-py3-none-manylinux_2_17_x86_64.whl holds code for target gfx1100; the wheel has code for gfx906, gfx90a",
        ),
        (
            "gfx120X-all",
            "family gfx120X-all (gfx1200, gfx1201); the wheel has code for gfx906, gfx90a",
        ),
        ("gfx90a", "holds code only for gfx906"),
        ("gfx120x-ALL", "Did you mean 'gfx120X-all'?"),
    ];
    for (gfx, needle) in cases {
        refused(thin(dir, gfx, WHEEL, &out), needle);
        assert_empty_dir(&dir.join("out"));
    }
    // A wheel without device code.
    let p = tempdir();
    std::fs::write(p.path().join("a.py"), "").unwrap();
    build(p.path(), &[("demo/a.py".into(), "a.py".into())]);
    std::fs::create_dir(p.path().join("out")).unwrap();
    refused(
        thin(p.path(), "gfx90a", WHEEL, &out),
        "no member holds GPU code",
    );
    assert_empty_dir(&p.path().join("out"));
}

/// A wheel built with a generic target (clang's --offload-arch=gfx12-generic)
/// keeps that code object for any target it covers, next to a specific one
/// for the same target; a target nothing covers is refused, naming what
/// each generic target covers.
#[test]
fn generic_code_objects_stay_for_the_targets_they_cover() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID12G, ID1201, ID942], "zstd")]);
    let thin_into = |gfx: &str, out: &str| {
        std::fs::create_dir(dir.join(out)).unwrap();
        let o = format!("{out}/{WHEEL}");
        let r = thin(dir, gfx, WHEEL, &o);
        (r, o)
    };
    let (r, fam) = thin_into("gfx120X-all", "fam");
    let report = r.unwrap().to_human();
    assert!(
        report.contains("kept gfx12-generic, gfx1201; dropped 1 code objects"),
        "{report}"
    );
    let elf = inspect(dir, &fam)["elf_files"][0].clone();
    assert_eq!(elf["targets"], json!({"gfx12-generic": 1, "gfx1201": 1}));
    let (r, named) = thin_into("gfx12-generic", "named");
    let report = r.unwrap().to_human();
    assert!(
        report.contains("kept gfx12-generic; dropped 2 code objects"),
        "{report}"
    );
    let (r, _) = thin_into("gfx1200,gfx942", "other");
    let report = r.unwrap().to_human();
    assert!(
        report.contains("kept gfx12-generic, gfx942; dropped 1 code objects"),
        "{report}"
    );
    // The code object kept is the compiler's.
    std::fs::write(
        dir.join("thin.so"),
        member(&dir.join(&named), "demo/libk.so"),
    )
    .unwrap();
    assert_eq!(
        extract(&dir.join("thin.so"), "gfx12-generic"),
        std::fs::read(dir.join("k.gfx12-generic.co")).unwrap()
    );
    let ids = reference_listing(dir, "thin.so");
    assert_eq!(ids, [ID12G, "host-x86_64-unknown-linux-gnu-"]);

    let (r, _) = thin_into("gfx1100", "refused");
    refused(
        r,
        "holds code for target gfx1100; the wheel has code for gfx942, gfx1201, \
         gfx12-generic (gfx1200, gfx1201)",
    );
    assert_empty_dir(&dir.join("refused"));
}

/// wheel-inspect of a thinned wheel says what its generic code object
/// covers.
#[test]
fn inspect_shows_what_a_generic_target_covers() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID12G, ID942], "zstd")]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = format!("out/{WHEEL}");
    thin(dir, "gfx120X-all", WHEEL, &out).unwrap();
    let text = wheel_inspect::inspect(&dir.join(&out)).unwrap().to_text();
    assert!(
        text.contains("    gfx12-generic (covers gfx1200, gfx1201): 1 code object\n"),
        "{text}"
    );
    let elf = inspect(dir, &out)["elf_files"][0].clone();
    assert_eq!(elf["targets"], json!({"gfx12-generic": 1}));
    assert_eq!(
        elf["covers"],
        json!({"gfx12-generic": ["gfx1200", "gfx1201"]})
    );
    let entries = elf["bundles"][0]["entries"].as_array().unwrap();
    let generic: Vec<&Value> = entries
        .iter()
        .filter(|e| e.get("covers").is_some())
        .collect();
    assert_eq!(generic.len(), 1, "{entries:?}");
    assert_eq!(generic[0]["target"], "gfx12-generic");
    assert_eq!(generic[0]["covers"], json!(["gfx1200", "gfx1201"]));
    // The input still has gfx942, which covers nothing.
    let fat = inspect(dir, WHEEL)["elf_files"][0].clone();
    assert_eq!(
        fat["covers"],
        json!({"gfx12-generic": ["gfx1200", "gfx1201"]})
    );
}

/// The kernel key of the split set's host library.
const KEY: &str = "//demo:k/k.hip";
const TARGETS: [&str; 2] = ["gfx1200", "gfx1201"];

/// What a device wheel of the host `demo` 1.0 requires: the host, exactly.
const PINS_HOST: [(&str, &str); 1] = [("demo==1.0", "")];

fn device_name(bundle: &str) -> String {
    format!("demo_device_{bundle}-1.0-py3-none-manylinux_2_17_x86_64.whl")
}

/// A kpack split set as hip_library and the wheel rules make it: the host
/// wheel [`WHEEL`] (demo/libk.so with one HIPK wrapper whose marker names
/// [`KEY`]) and [`device_wheels`] holding that key.
fn split_set(dir: &Path) {
    let marker = kpack::Marker {
        kernel_name: KEY.into(),
        search_paths: vec![
            ".kpack/@GFXARCH@.kpack".into(),
            "../.kpack/@GFXARCH@.kpack".into(),
        ],
    };
    std::fs::write(dir.join("k.kpackref"), marker.to_bytes().unwrap()).unwrap();
    std::fs::write(dir.join("k.hipk"), kpack::hipk_wrapper(0)).unwrap();
    kpack_host_so(dir, "k.kpackref", "k.hipk", "$ORIGIN", "libk.so");
    // Its device extras: what makes the device wheels its own.
    let requires = [
        ("demo-device-gfx1200==1.0", "device-gfx1200"),
        ("demo-device-gfx1201==1.0", "device-gfx1201"),
        ("demo-device-gfx12==1.0", "device-all"),
    ];
    build_wheel_requiring(
        dir,
        "demo",
        &[("demo/libk.so", "libk.so")],
        WHEEL,
        &requires,
    );
    device_wheels(dir, KEY);
}

/// An archive per target holding `key` (real gfx1200/gfx1201 code
/// objects), and device wheels: one per target and one for the gfx12
/// family.
fn device_wheels(dir: &Path, key: &str) {
    for t in TARGETS {
        let mut w = kpack::ArchiveWriter::new(
            "demo",
            t,
            &[t.to_string()],
            kpack::Compression::ZstdPerKernel,
        );
        w.add(&format!("{key}#0"), t, &code_object(t)).unwrap();
        w.write(&dir.join(format!("{t}.kpack"))).unwrap();
        build_wheel_requiring(
            dir,
            &format!("demo-device-{t}"),
            &[(&format!("demo/.kpack/{t}.kpack"), &format!("{t}.kpack"))],
            &device_name(t),
            &PINS_HOST,
        );
    }
    build_wheel_requiring(
        dir,
        "demo-device-gfx12",
        &[
            ("demo/.kpack/gfx1200.kpack", "gfx1200.kpack"),
            ("demo/.kpack/gfx1201.kpack", "gfx1201.kpack"),
        ],
        &device_name("gfx12"),
        &PINS_HOST,
    );
}

#[test]
fn a_split_set_keeps_the_device_wheels_of_the_requested_targets() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    std::fs::create_dir(dir.join("out")).unwrap();
    let (d1200, d1201) = (device_name("gfx1200"), device_name("gfx1201"));
    let report = thin_with(
        dir,
        "gfx1201",
        None,
        WHEEL,
        &format!("out/{WHEEL}"),
        &[&d1200, &d1201],
    )
    .unwrap()
    .to_human();
    assert_eq!(
        file_names(&dir.join("out")),
        vec![WHEEL.to_string(), d1201.clone()]
    );
    assert_eq!(
        std::fs::read(dir.join("out").join(WHEEL)).unwrap(),
        std::fs::read(dir.join(WHEEL)).unwrap(),
        "host copied as it is"
    );
    assert!(
        report.contains(&format!("kept {d1201} (gfx1201)")),
        "{report}"
    );
    assert!(
        report.contains(&format!("left out {d1200} (gfx1200)")),
        "{report}"
    );

    // A family wheel serving a requested target is kept whole.
    std::fs::create_dir(dir.join("out2")).unwrap();
    let d12 = device_name("gfx12");
    thin_with(
        dir,
        "gfx120X-all",
        None,
        WHEEL,
        &format!("out2/{WHEEL}"),
        &[&d12],
    )
    .unwrap();
    assert_eq!(file_names(&dir.join("out2")), vec![WHEEL.to_string(), d12]);
}

#[test]
fn a_split_set_refuses_what_it_cannot_give_and_writes_nothing() {
    let d = tempdir();
    let dir = d.path();
    split_set(dir);
    // An archive of another library: the host's key is not in it.
    let other = tempdir();
    device_wheels(other.path(), "//other:lib/x.hip");
    let d1201 = device_name("gfx1201");
    std::fs::create_dir(dir.join("stranger")).unwrap();
    copy_in(&other.path().join(&d1201), &dir.join("stranger"), &d1201);
    std::fs::create_dir(dir.join("out")).unwrap();
    let before = snapshot(dir);
    let o = format!("out/{WHEEL}");
    let stranger = format!("stranger/{d1201}");
    let out_device = format!("out/{d1201}");
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        &'a str,
        &'a str,
        Vec<&'a str>,
        String,
    );
    let cases: [Case; 6] = [
        (
            "gfx1100", None, WHEEL, &o, vec![&d1201],
            "no device wheel holds code for target gfx1100 (gfx1100); the device wheels given serve gfx1201".into(),
        ),
        (
            "gfx1201", None, WHEEL, &o, vec![],
            "a kpack host wheel: its binaries hold markers, its device code is in device wheels; \
             thin the set by choosing them: --device-wheel".into(),
        ),
        (
            "gfx1201", Some("x"), WHEEL, &o, vec![&d1201],
            "renaming it would orphan them".into(),
        ),
        (
            "gfx1201", None, WHEEL, "out/other.whl", vec![&d1201],
            format!("the output must be named {WHEEL}"),
        ),
        (
            "gfx1201", None, WHEEL, &o, vec![&stranger],
            "has no //demo:k/k.hip#0".into(),
        ),
        (
            "gfx1201", None, &d1201, &out_device, vec![&d1201],
            "no binary refers to kpack archives; --device-wheel is for kpack host wheels".into(),
        ),
    ];
    for (gfx, suffix, input, output, devices, needle) in cases {
        refused(
            thin_with(dir, gfx, suffix, input, output, &devices),
            &needle,
        );
    }
    assert_unchanged(dir, &before);
    assert!(file_names(&dir.join("out")).is_empty());
}
