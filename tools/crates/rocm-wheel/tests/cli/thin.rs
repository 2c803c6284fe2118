//! `rocm-wheel thin` on wheels holding real HIP shared objects: what is
//! kept, what stays byte-identical, the formats, and the refusals.

use crate::*;
use serde_json::{json, Value};
use std::path::Path;

const WHEEL: &str = "demo-1.0-py3-none-manylinux_2_17_x86_64.whl";
const ID906: &str = "hipv4-amdgcn-amd-amdhsa--gfx906";
const ID90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";
const ID942: &str = "hipv4-amdgcn-amd-amdhsa--gfx942";
const ID1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";
const ID12G: &str = "hipv4-amdgcn-amd-amdhsa--gfx12-generic";

/// The processor an entry id names (`gfx12-generic` whole).
fn gfx_of(id: &str) -> &str {
    id.split_once("--").unwrap().1
}

/// A bundle of `ids` (code objects k.<gfx>.co) written as `out`.
fn bundle(dir: &Path, out: &str, compress: &str, ids: &[&str]) {
    let mut args = vec![
        "bundle".to_string(),
        "write".into(),
        "--output".into(),
        out.into(),
        "--compress".into(),
        compress.into(),
        "--host-triple".into(),
        "x86_64-unknown-linux-gnu".into(),
    ];
    for id in ids {
        args.push("--entry".into());
        args.push(format!("{id}=k.{}.co", gfx_of(id)));
    }
    rw(dir, &args).success();
}

/// A wheel with `sos` (name, bundle ids, compression) as shared objects
/// under demo/, plus a Python file.
fn wheel(dir: &Path, sos: &[(&str, &[&str], &str)]) -> std::path::PathBuf {
    for id in sos.iter().flat_map(|(_, ids, _)| ids.iter()) {
        let gfx = gfx_of(id);
        copy_in(&code_object(gfx), dir, &format!("k.{gfx}.co"));
    }
    std::fs::write(dir.join("__init__.py"), "").unwrap();
    let mut files = vec![json!({"path": "demo/__init__.py", "src": "__init__.py"})];
    for (name, ids, compress) in sos {
        bundle(dir, "k.hipfb", compress, ids);
        hip_so(dir, "k.hipfb", name);
        files.push(json!({"path": format!("demo/{name}"), "src": name}));
    }
    let m = json!({
        "distribution": "demo", "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"], "files": files,
    });
    std::fs::write(dir.join("m.json"), m.to_string()).unwrap();
    rw(dir, &["build", "--manifest", "m.json", "--output", WHEEL]).success();
    dir.join(WHEEL)
}

fn inspect(dir: &Path, whl: &str) -> Value {
    serde_json::from_str(&rw(dir, &["inspect", "--json", whl]).success().stdout).unwrap()
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
    let listed: Value = serde_json::from_str(
        &rw(dir, &["bundle", "list", "--json", "fb.bin"])
            .success()
            .stdout,
    )
    .unwrap();
    let (o, n) = (
        listed["bundles"][0]["offset"].as_u64().unwrap() as usize,
        listed["bundles"][0]["size"].as_u64().unwrap() as usize,
    );
    let fb = std::fs::read(dir.join("fb.bin")).unwrap();
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
        let report = rw(dir, &["thin", "--gfx", "gfx90a-dcgpu", WHEEL, "-o", &out])
            .success()
            .stdout;
        assert!(
            report.contains("kept gfx90a; dropped 1 code objects"),
            "{report}"
        );
        // inspect verifies every RECORD hash and size.
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
        rw(
            dir,
            &[
                "bundle", "extract", "thin.so", "--target", "gfx90a", "--output", "x.co",
            ],
        )
        .success();
        assert_eq!(
            std::fs::read(dir.join("x.co")).unwrap(),
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
        rw(dir, &["thin", "--gfx", "gfx90a", WHEEL, "-o", &again]).success();
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
    let thin = |o: &str| {
        rw(
            dir,
            &[
                "thin",
                "--gfx",
                "gfx90a-dcgpu",
                "--name-suffix",
                "gfx90a-dcgpu",
                WHEEL,
                "-o",
                o,
            ],
        )
    };
    thin("wrong-1.0-py3-none-any.whl").fails(1, &format!("the output must be named {out}"));
    thin(out).success();
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
        rw(dir, &["thin", "--gfx", gfx, WHEEL, "-o", &out]).fails(1, needle);
        let left: Vec<_> = std::fs::read_dir(dir.join("out")).unwrap().collect();
        assert!(left.is_empty(), "--gfx {gfx} left {left:?}");
    }
    // A wheel without device code.
    let p = tempdir();
    std::fs::write(p.path().join("a.py"), "").unwrap();
    let m = json!({"distribution": "demo", "version": "1.0",
        "tags": ["py3-none-manylinux_2_17_x86_64"],
        "files": [{"path": "demo/a.py", "src": "a.py"}]});
    std::fs::write(p.path().join("m.json"), m.to_string()).unwrap();
    rw(
        p.path(),
        &["build", "--manifest", "m.json", "--output", WHEEL],
    )
    .success();
    std::fs::create_dir(p.path().join("out")).unwrap();
    rw(p.path(), &["thin", "--gfx", "gfx90a", WHEEL, "-o", &out])
        .fails(1, "no member holds GPU code");
    assert_eq!(std::fs::read_dir(p.path().join("out")).unwrap().count(), 0);
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
    let thin = |gfx: &str, out: &str| {
        std::fs::create_dir(dir.join(out)).unwrap();
        let o = format!("{out}/{WHEEL}");
        let r = rw(dir, &["thin", "--gfx", gfx, WHEEL, "-o", &o]);
        (r, o)
    };
    let (r, fam) = thin("gfx120X-all", "fam");
    let report = r.success().stdout;
    assert!(
        report.contains("kept gfx12-generic, gfx1201; dropped 1 code objects"),
        "{report}"
    );
    let elf = inspect(dir, &fam)["elf_files"][0].clone();
    assert_eq!(elf["targets"], json!({"gfx12-generic": 1, "gfx1201": 1}));
    let (r, named) = thin("gfx12-generic", "named");
    let report = r.success().stdout;
    assert!(
        report.contains("kept gfx12-generic; dropped 2 code objects"),
        "{report}"
    );
    let (r, _) = thin("gfx1200,gfx942", "other");
    let report = r.success().stdout;
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
    rw(
        dir,
        &[
            "bundle",
            "extract",
            "thin.so",
            "--target",
            "gfx12-generic",
            "--output",
            "g.co",
        ],
    )
    .success();
    assert_eq!(
        std::fs::read(dir.join("g.co")).unwrap(),
        std::fs::read(dir.join("k.gfx12-generic.co")).unwrap()
    );
    let ids = reference_listing(dir, "thin.so");
    assert_eq!(ids, [ID12G, "host-x86_64-unknown-linux-gnu-"]);

    let (r, _) = thin("gfx1100", "refused");
    r.fails(
        1,
        "holds code for target gfx1100; the wheel has code for gfx942, gfx1201, \
         gfx12-generic (gfx1200, gfx1201)",
    );
    assert_eq!(std::fs::read_dir(dir.join("refused")).unwrap().count(), 0);
}

/// `inspect` of a thinned wheel says what its generic code object covers.
#[test]
fn inspect_shows_what_a_generic_target_covers() {
    let d = tempdir();
    let dir = d.path();
    wheel(dir, &[("libk.so", &[ID12G, ID942], "zstd")]);
    std::fs::create_dir(dir.join("out")).unwrap();
    let out = format!("out/{WHEEL}");
    rw(dir, &["thin", "--gfx", "gfx120X-all", WHEEL, "-o", &out]).success();
    let text = rw(dir, &["inspect", &out]).success().stdout;
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

#[test]
fn help_says_what_happens_to_the_installed_size() {
    let d = tempdir();
    let help = rw(d.path(), &["thin", "--help"]).success().stdout;
    assert!(
        help.contains("the installed size does not: each .so keeps its size"),
        "{help}"
    );
}
