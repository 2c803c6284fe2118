//! `inspect` on files made by the real tools of the build root: LLVM's
//! HIP driver (clang++), clang-offload-bundler and lld, `wheel pack`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use offload_bundle::{write_bundle_file, Compression, Method, WriteRequest};
use test_support::*;
use wheel_inspect::inspect;

fn targets(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// `clang++ -x hip --offload-arch=gfx906 --offload-arch=gfx90a -c`: the
/// driver builds both device code objects and bundles them itself
/// (uncompressed, unless `extra` has `--offload-compress`). A fixed `-cuid`
/// (the compilation unit id clang hashes into a device symbol, by default
/// from the options too) makes every variant carry the same device code.
fn driver_object_with(f: &Fixtures, name: &str, extra: &[&str]) -> PathBuf {
    let out = f.path(name);
    if !out.exists() {
        run(llvm_cmd("clang++")
            .args([
                "-x",
                "hip",
                "--offload-arch=gfx906",
                "--offload-arch=gfx90a",
            ])
            .arg("--rocm-path=/usr")
            .arg(format!("--rocm-device-lib-path={}", bitcode().display()))
            .args(["-cuid=k", "-fPIC", "-O2", "-c"])
            .args(extra)
            .arg(f.path("k.hip"))
            .arg("-o")
            .arg(&out));
    }
    out
}

fn driver_object(f: &Fixtures) -> PathBuf {
    driver_object_with(f, "driver.o", &[])
}

/// `readelf -d` as the oracle for the dynamic section.
fn readelf_dynamic(path: &Path) -> (Vec<String>, Vec<String>, Option<String>) {
    let out = run(Command::new(binutils("readelf")).arg("-dW").arg(path));
    let text = String::from_utf8(out.stdout).unwrap();
    let bracket = |l: &str| l[l.find('[').unwrap() + 1..l.rfind(']').unwrap()].to_string();
    let mut needed = Vec::new();
    let mut runpath = Vec::new();
    let mut soname = None;
    for l in text.lines() {
        if l.contains("(NEEDED)") {
            needed.push(bracket(l));
        } else if l.contains("(RUNPATH)") {
            runpath.extend(bracket(l).split(':').map(str::to_string));
        } else if l.contains("(SONAME)") {
            soname = Some(bracket(l));
        }
    }
    (needed, runpath, soname)
}

#[test]
fn object_and_shared_object_from_the_hip_driver() {
    let f = fixtures();
    let obj = driver_object(&f);
    let r = inspect(&obj).unwrap();
    assert_eq!(r.kind, "elf");
    let e = &r.elf_files[0];
    assert_eq!(e.elf_type, "relocatable");
    assert_eq!(e.targets, targets(&[("gfx906", 1), ("gfx90a", 1)]));

    let so = f.path("libdriver.so");
    link_shared(&[&obj], &so, &["-Wl,-soname,libdriver.so.1"]);
    let r = inspect(&so).unwrap();
    let e = &r.elf_files[0];
    assert_eq!(e.elf_type, "shared object");
    assert_eq!(e.machine, "x86-64");
    assert_eq!(e.targets, targets(&[("gfx906", 1), ("gfx90a", 1)]));
    assert_eq!(e.bundles.len(), 1);
    assert_eq!(e.bundles[0].compression, "none");
    let (needed, runpath, soname) = readelf_dynamic(&so);
    // libamdhip64.so.<HIP major> of the build root's ROCm.
    assert!(
        needed.iter().any(|n| n.starts_with("libamdhip64.so.")),
        "{needed:?}"
    );
    assert_eq!(e.needed, needed);
    assert_eq!(e.runpath, runpath);
    assert_eq!(runpath, ["$ORIGIN/../rocm/lib"]);
    assert_eq!(e.soname, soname);
    assert_eq!(e.soname.as_deref(), Some("libdriver.so.1"));
    let text = r.to_text();
    assert!(text.contains("gfx906: 1 code object\n"), "{text}");
}

/// `--offload-compress`: the driver writes one zstd CCOB (clang's default
/// format version: 2 from clang 21, 3 from clang 22) holding both code
/// objects, as in the plain object.
#[test]
fn compressed_object_from_the_hip_driver() {
    let f = fixtures();
    let plain = inspect(&driver_object(&f)).unwrap();
    let obj = driver_object_with(&f, "driver-z.o", &["--offload-compress"]);
    let r = inspect(&obj).unwrap();
    let e = &r.elf_files[0];
    assert_eq!(e.targets, targets(&[("gfx906", 1), ("gfx90a", 1)]));
    assert_eq!(e.bundles.len(), 1, "{e:#?}");
    assert_eq!(e.bundles[0].compression, "zstd");
    assert!(
        matches!(e.bundles[0].format_version, Some(2 | 3)),
        "{:?}",
        e.bundles[0].format_version
    );
    // The same entries and code objects as the uncompressed bundle.
    let data = |p: &Path| {
        let bytes = std::fs::read(p).unwrap();
        let sec = offload_bundle::hip_fatbin_section(&bytes).unwrap().unwrap();
        let b = offload_bundle::read_bundle(sec, &Default::default()).unwrap();
        b.entries
            .iter()
            .map(|en| (en.id.clone(), b.entry_data(en).to_vec()))
            .collect::<Vec<_>>()
    };
    assert_eq!(plain.elf_files[0].bundles[0].compression, "none");
    assert!(data(&obj) == data(&driver_object(&f)));
}

/// Two objects linked together give two bundles back to back in one
/// `.hip_fatbin`: one made by the driver (uncompressed), one by our writer
/// (zstd) holding a gfx90a and a gfx1200 code object of another source.
#[test]
fn every_bundle_of_a_linked_section_is_reported() {
    let f = fixtures();
    let obj1 = driver_object(&f);
    let co90a = {
        // Device code of the second source for gfx90a.
        let out = f.path("k2.gfx90a.co");
        run(llvm_cmd("clang++")
            .args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
            .args(["--offload-arch=gfx90a", "--rocm-path=/usr"])
            .arg(format!("--rocm-device-lib-path={}", bitcode().display()))
            .args(["-O2", "-c"])
            .arg(f.path("k2.hip"))
            .arg("-o")
            .arg(&out));
        out
    };
    let co1200 = f.code_object("gfx1200");
    let fb = f.path("k2.hipfb");
    write_bundle_file(&WriteRequest {
        output: fb.clone(),
        host_triple: HOST.into(),
        entries: vec![(device_id("gfx90a"), co90a), (device_id("gfx1200"), co1200)],
        compression: Compression::Compressed {
            method: Method::Zstd,
            version: 2,
            level: None,
        },
    })
    .unwrap();
    let obj2 = f.path("k2.host.o");
    host_object(&f.path("k2.hip"), &fb, &obj2);
    let so = f.path("libtwo.so");
    link_shared(&[&obj1, &obj2], &so, &[]);

    let r = inspect(&so).unwrap();
    let e = &r.elf_files[0];
    assert_eq!(e.bundles.len(), 2, "{e:#?}");
    let kinds: Vec<_> = e.bundles.iter().map(|b| b.compression).collect();
    assert_eq!(kinds, ["none", "zstd"]);
    assert!(e.bundles.iter().all(|b| b.offset % 4096 == 0));
    assert_eq!(
        e.targets,
        targets(&[("gfx1200", 1), ("gfx906", 1), ("gfx90a", 2)])
    );
    let text = r.to_text();
    assert!(text.contains("gfx90a: 2 code objects"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["elf_files"][0]["targets"]["gfx90a"], 2);
    assert_eq!(json["elf_files"][0]["bundles"][1]["format_version"], 2);
}

/// Builds `demo_pkg-1.0-py3-none-linux_x86_64.whl` with `wheel pack`.
fn make_wheel(f: &Fixtures, dir: &Path) -> PathBuf {
    let so = f.path("libdriver-wheel.so");
    if !so.exists() {
        link_shared(&[&driver_object(f)], &so, &[]);
    }
    let tree = dir.join("tree");
    let pkg = tree.join("demo_pkg");
    let di = tree.join("demo_pkg-1.0.dist-info");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(&di).unwrap();
    std::fs::copy(&so, pkg.join("libk.so")).unwrap();
    // A bare code object and a bundle file, as some ROCm packages ship.
    std::fs::copy(f.code_object("gfx906"), pkg.join("k.gfx906.co")).unwrap();
    write_bundle_file(&WriteRequest {
        output: pkg.join("kernels.hipfb"),
        host_triple: HOST.into(),
        entries: vec![(device_id("gfx1201"), f.code_object("gfx1201"))],
        compression: Compression::Compressed {
            method: Method::Zlib,
            version: 3,
            level: Some(9),
        },
    })
    .unwrap();
    std::fs::write(pkg.join("__init__.py"), "# demo\n").unwrap();
    std::fs::write(
        di.join("WHEEL"),
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n",
    )
    .unwrap();
    std::fs::write(
        di.join("METADATA"),
        "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n\nA demo.\n",
    )
    .unwrap();
    pack(&tree, &dir.join("dist"))
}

/// `wheel pack`: writes RECORD for the tree and zips it.
fn pack(tree: &Path, out: &Path) -> PathBuf {
    std::fs::create_dir_all(out).unwrap();
    run(Command::new(venv_bin("wheel"))
        .arg("pack")
        .arg(tree)
        .arg("-d")
        .arg(out));
    out.join("demo_pkg-1.0-py3-none-linux_x86_64.whl")
}

#[test]
fn wheel_with_a_hip_library() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let whl = make_wheel(&f, dir.path());
    let r = inspect(&whl).unwrap();
    assert_eq!(r.kind, "wheel");
    let w = r.wheel.as_ref().unwrap();
    assert_eq!((w.name.as_str(), w.version.as_str()), ("demo-pkg", "1.0"));
    assert_eq!(w.tags, ["py3-none-linux_x86_64"]);
    assert!(!w.root_is_purelib);
    let mut paths: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "demo_pkg-1.0.dist-info/METADATA",
            "demo_pkg-1.0.dist-info/RECORD",
            "demo_pkg-1.0.dist-info/WHEEL",
            "demo_pkg/__init__.py",
            "demo_pkg/k.gfx906.co",
            "demo_pkg/kernels.hipfb",
            "demo_pkg/libk.so",
        ]
    );
    let elf: BTreeMap<&str, &wheel_inspect::ElfInfo> =
        r.elf_files.iter().map(|e| (e.path.as_str(), e)).collect();
    assert_eq!(
        elf.keys().copied().collect::<Vec<_>>(),
        ["demo_pkg/k.gfx906.co", "demo_pkg/libk.so"]
    );
    assert_eq!(
        elf["demo_pkg/libk.so"].targets,
        targets(&[("gfx906", 1), ("gfx90a", 1)])
    );
    let co = elf["demo_pkg/k.gfx906.co"];
    assert_eq!(
        (co.machine.as_str(), co.elf_type),
        ("amdgpu", "shared object")
    );
    assert_eq!(co.targets, targets(&[("gfx906", 1)]));
    assert_eq!(r.bundle_files.len(), 1);
    let hipfb = &r.bundle_files[0];
    assert_eq!(hipfb.path, "demo_pkg/kernels.hipfb");
    assert_eq!(hipfb.targets, targets(&[("gfx1201", 1)]));
    assert_eq!(
        (
            hipfb.bundles[0].compression,
            hipfb.bundles[0].format_version
        ),
        ("zlib", Some(3))
    );
    let text = r.to_text();
    assert!(
        text.contains("demo_pkg/libk.so: ELF shared object"),
        "{text}"
    );
}

/// A code object clang 22 builds for a generic target (code-object version
/// 6, `--offload-arch=gfx12-generic`), alone and in a bundle file: both
/// reports say which targets it runs on.
#[test]
fn generic_target_reports_what_it_covers() {
    let f = fixtures();
    let co = f.code_object("gfx12-generic");
    let hdr = offload_bundle::read_code_object_header(&std::fs::read(&co).unwrap(), "co").unwrap();
    // EF_AMDGPU_GENERIC_VERSION (bits 24..31) is set; the mach bits alone
    // name the processor.
    assert_eq!(hdr.e_flags >> 24, 1, "e_flags {:#x}", hdr.e_flags);
    let r = inspect(&co).unwrap();
    let e = &r.elf_files[0];
    assert_eq!(e.targets, targets(&[("gfx12-generic", 1)]));
    assert_eq!(e.covers["gfx12-generic"], ["gfx1200", "gfx1201"]);
    let text = r.to_text();
    assert!(
        text.contains("  code object for gfx12-generic (covers gfx1200, gfx1201)\n"),
        "{text}"
    );

    let fb = f.path("generic.hipfb");
    write_bundle_file(&WriteRequest {
        output: fb.clone(),
        host_triple: HOST.into(),
        entries: vec![
            (device_id("gfx12-generic"), co.clone()),
            (device_id("gfx1201"), f.code_object("gfx1201")),
        ],
        compression: Compression::None,
    })
    .unwrap();
    let r = inspect(&fb).unwrap();
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let b = &json["bundle_files"][0];
    assert_eq!(
        b["covers"],
        serde_json::json!({"gfx12-generic": ["gfx1200", "gfx1201"]})
    );
    let covers: Vec<_> = b["bundles"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["target"].as_str().unwrap(), e.get("covers").cloned()))
        .collect();
    assert_eq!(
        covers,
        [
            ("", None),
            (
                "gfx12-generic",
                Some(serde_json::json!(["gfx1200", "gfx1201"]))
            ),
            ("gfx1201", None),
        ]
    );
    let text = r.to_text();
    assert!(
        text.contains("    gfx12-generic (covers gfx1200, gfx1201): 1 code object\n"),
        "{text}"
    );
    assert!(text.contains("    gfx1201: 1 code object\n"), "{text}");
}

/// Rewrites members of a zip with Python's zipfile (keeping RECORD as is).
fn rewrite_zip(src: &Path, dst: &Path, script: &str) {
    let code = format!(
        "import sys, zipfile\n\
         src, dst = sys.argv[1], sys.argv[2]\n\
         zin = zipfile.ZipFile(src)\n\
         zout = zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED)\n\
         for i in zin.infolist():\n\
         \x20   data = zin.read(i.filename)\n\
         {script}\n\
         \x20   zout.writestr(i, data)\n\
         zout.close()\n"
    );
    run(Command::new(venv_bin("python"))
        .arg("-c")
        .arg(code)
        .arg(src)
        .arg(dst));
}

#[test]
fn record_hash_mismatch_names_the_member() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let whl = make_wheel(&f, dir.path());
    let bad = dir.path().join("demo_pkg-1.0-py3-none-linux_x86_64.whl");
    rewrite_zip(
        &whl,
        &bad,
        "    if i.filename == 'demo_pkg/__init__.py': data = b'# tampered\\n'",
    );
    let e = format!("{:#}", inspect(&bad).unwrap_err());
    assert!(
        e.contains(&bad.display().to_string())
            && e.contains("RECORD hash mismatch for demo_pkg/__init__.py"),
        "{e}"
    );
    // A member RECORD does not know.
    let extra = dir
        .path()
        .join("x")
        .join("demo_pkg-1.0-py3-none-linux_x86_64.whl");
    std::fs::create_dir_all(extra.parent().unwrap()).unwrap();
    run(Command::new(venv_bin("python"))
        .arg("-c")
        .arg("import shutil, sys, zipfile\nshutil.copy(sys.argv[1], sys.argv[2])\nzipfile.ZipFile(sys.argv[2], 'a').writestr('demo_pkg/extra.py', 'x = 1\\n')")
        .arg(&whl)
        .arg(&extra));
    let e = format!("{:#}", inspect(&extra).unwrap_err());
    assert!(e.contains("demo_pkg/extra.py is not listed in"), "{e}");
}

#[test]
fn corrupt_bundle_in_a_wheel_member_names_it() {
    let f = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let whl = make_wheel(&f, dir.path());
    // Corrupt the bundle magic inside the .so, then re-pack so RECORD matches.
    let tree = dir.path().join("tree");
    let so = tree.join("demo_pkg/libk.so");
    let mut data = std::fs::read(&so).unwrap();
    let sec = offload_bundle::hip_fatbin_section(&data).unwrap().unwrap();
    let off = sec.as_ptr() as usize - data.as_ptr() as usize;
    data[off + 3] = b'#';
    std::fs::write(&so, &data).unwrap();
    std::fs::remove_file(&whl).unwrap();
    let whl = pack(&tree, &dir.path().join("dist"));
    let e = format!("{:#}", inspect(&whl).unwrap_err());
    assert!(
        e.contains("demo_pkg/libk.so")
            && e.contains(".hip_fatbin")
            && e.contains("not an offload bundle"),
        "{e}"
    );
}

#[test]
fn zip_that_is_not_a_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let z = dir.path().join("demo-1.0-py3-none-any.whl");
    run(Command::new(venv_bin("python"))
        .arg("-c")
        .arg("import sys, zipfile\nzipfile.ZipFile(sys.argv[1], 'w').writestr('demo/__init__.py', '')")
        .arg(&z));
    let e = format!("{:#}", inspect(&z).unwrap_err());
    assert!(
        e.contains(&z.display().to_string()) && e.contains("not a wheel"),
        "{e}"
    );
    // Neither zip nor ELF.
    let t = dir.path().join("notes.txt");
    std::fs::write(&t, "hello").unwrap();
    let e = format!("{:#}", inspect(&t).unwrap_err());
    assert!(
        e.contains("notes.txt") && e.contains("nothing to inspect"),
        "{e}"
    );
}

/// A wheel from PyPI, downloaded once into `tools/target/test-cache/wheels`.
fn cached_wheel(requirement: &str, filename: &str) -> PathBuf {
    let cache = test_cache("wheels");
    let path = cache.join(filename);
    if !path.exists() {
        let download = tempfile::tempdir_in(&cache).unwrap();
        run(Command::new(venv_bin("pip"))
            .args(["download", "--no-deps", "--only-binary=:all:"])
            .args([
                "--python-version",
                "3.12",
                "--platform",
                "manylinux_2_28_x86_64",
            ])
            .arg(requirement)
            .arg("-d")
            .arg(download.path()));
        produce(&path, |tmp| {
            std::fs::copy(download.path().join(filename), tmp).unwrap();
        });
    }
    path
}

/// A wheel shipped by AMD (ROCm 7, compressed CCOB v3 bundles in several
/// extension modules): our report agrees with readelf and with the
/// independent Python bundle reader run on objcopy's dump of each section.
#[test]
fn real_jax_rocm7_plugin_wheel() {
    let whl = cached_wheel(
        "jax-rocm7-plugin==0.10.0",
        "jax_rocm7_plugin-0.10.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    );
    let r = inspect(&whl).unwrap();
    let w = r.wheel.as_ref().unwrap();
    assert_eq!(
        (w.name.as_str(), w.version.as_str()),
        ("jax-rocm7-plugin", "0.10.0")
    );
    assert_eq!(w.tags, ["cp312-cp312-manylinux_2_28_x86_64"]);

    let dir = tempfile::tempdir().unwrap();
    run(Command::new(venv_bin("python"))
        .arg("-c")
        .arg("import sys, zipfile\nzipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])")
        .arg(&whl)
        .arg(dir.path()));
    let mut all_targets = std::collections::BTreeSet::new();
    let mut bundles = 0;
    for e in &r.elf_files {
        let so = dir.path().join(&e.path);
        let (needed, runpath, soname) = readelf_dynamic(&so);
        assert_eq!(
            (&e.needed, &e.runpath, &e.soname),
            (&needed, &runpath, &soname),
            "{}",
            e.path
        );
        let theirs = python_section_reader(dir.path(), &so);
        let mut want: BTreeMap<String, u32> = BTreeMap::new();
        for b in theirs.as_array().unwrap() {
            assert_eq!(b["hash_ok"], true, "{}", e.path);
            for en in b["entries"].as_array().unwrap() {
                let id = en["id"].as_str().unwrap();
                if let Some(t) = id.strip_prefix("hipv4-amdgcn-amd-amdhsa--") {
                    *want.entry(t.to_string()).or_default() += 1;
                }
            }
        }
        assert_eq!(e.targets, want, "{}", e.path);
        assert_eq!(
            e.bundles.len(),
            theirs.as_array().unwrap().len(),
            "{}",
            e.path
        );
        for b in &e.bundles {
            assert_eq!(
                (b.compression, b.format_version),
                ("zstd", Some(3)),
                "{}",
                e.path
            );
        }
        bundles += e.bundles.len();
        all_targets.extend(e.targets.keys().cloned());

        assert_writer_matches_the_compiler(&so, &e.path);
    }
    assert!(
        bundles >= 4,
        "expected the plugin's HIP kernels, found {bundles} bundles"
    );
    assert_eq!(
        all_targets.into_iter().collect::<Vec<_>>(),
        [
            "gfx10-3-generic",
            "gfx11-generic",
            "gfx12-generic",
            "gfx9-4-generic",
            "gfx908",
            "gfx90a"
        ]
    );
}

/// The independent Python bundle reader's view of `so`'s `.hip_fatbin`
/// (objcopy's dump of the section, written under `dir`).
fn python_section_reader(dir: &Path, so: &Path) -> serde_json::Value {
    let dump = dir.join("fatbin.bin");
    let _ = std::fs::remove_file(&dump);
    run(Command::new(binutils("objcopy"))
        .args(["-O", "binary", "--only-section=.hip_fatbin"])
        .arg(so)
        .arg(&dump));
    let o = run(Command::new(venv_bin("python"))
        .arg(test_support::manifest_dir().join("../offload-bundle/tests/ccob.py"))
        .arg("section")
        .arg(&dump));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Our writer lays out the same inputs byte for byte like the compiler
/// that built the shipped wheel, for every bundle of `so`.
fn assert_writer_matches_the_compiler(so: &Path, path: &str) {
    let data = std::fs::read(so).unwrap();
    let Some(sec) = offload_bundle::hip_fatbin_section(&data).unwrap() else {
        return;
    };
    for b in offload_bundle::read_bundles(sec, &Default::default()).unwrap() {
        let host = b.entries.iter().find(|e| e.parsed_id().is_host()).unwrap();
        assert!(host.id.ends_with('-'), "{}", host.id);
        let triple = host.parsed_id().triple.to_string();
        let devices: Vec<(String, Vec<u8>)> = b
            .device_entries()
            .map(|en| (en.id.clone(), b.entry_data(en).to_vec()))
            .collect();
        let ours = offload_bundle::build_uncompressed(&triple, &devices).unwrap();
        assert!(
            ours == b.uncompressed(),
            "{}: bundle at {} differs",
            path,
            b.start
        );
    }
}

const DEMO_PLAT: &str = "py3-none-manylinux_2_17_x86_64";
const DEMO_WHEEL: &str = "rocmdemo-0.1-py3-none-manylinux_2_17_x86_64.whl";

/// A platform wheel built by wheel-writer in `d`: a gcc-built shared
/// library with a RUNPATH, and a `.hipfb` of two real code objects.
fn demo_wheel(d: &Path) -> PathBuf {
    let src = d.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("__init__.py"), "").unwrap();
    gcc_so(
        &src,
        "libdemo.so",
        ANSWER_C,
        &["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../rocm/lib"],
    );
    write_bundle_file(&WriteRequest {
        output: src.join("kernels.hipfb"),
        host_triple: HOST.into(),
        entries: vec![
            (device_id("gfx906"), code_object("gfx906")),
            (device_id("gfx90a"), code_object("gfx90a")),
        ],
        compression: Compression::Compressed {
            method: Method::Zstd,
            version: 2,
            level: None,
        },
    })
    .unwrap();
    let m = serde_json::json!({
        "distribution": "rocmdemo",
        "version": "0.1",
        "tags": [DEMO_PLAT],
        "files": [
            {"path": "rocmdemo/__init__.py", "src": src.join("__init__.py")},
            {"path": "rocmdemo/libdemo.so", "src": src.join("libdemo.so")},
            {"path": "rocmdemo/kernels.hipfb", "src": src.join("kernels.hipfb")}
        ]
    });
    let whl = d.join(DEMO_WHEEL);
    wheel_writer::build(
        &wheel_writer::Manifest::from_json(&m.to_string()).unwrap(),
        &whl,
        &wheel_writer::Options::default(),
    )
    .unwrap();
    whl
}

/// Every member of the demo wheel is listed in archive order; the library
/// is the only ELF file, the bundle file says its targets.
#[test]
fn wheel_lists_files_and_targets() {
    const PLAT: &str = DEMO_PLAT;
    const WHEEL: &str = DEMO_WHEEL;
    let d = tempdir();
    let whl = demo_wheel(d.path());
    let r = inspect(&whl).unwrap();
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "wheel");
    let w = &v["wheel"];
    assert_eq!(w["filename"], WHEEL);
    assert_eq!(w["name"], "rocmdemo");
    assert_eq!(w["version"], "0.1");
    assert_eq!(w["tags"], serde_json::json!([PLAT]));
    assert_eq!(w["root_is_purelib"], false);
    let files: Vec<&str> = w["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "rocmdemo/__init__.py",
            "rocmdemo/kernels.hipfb",
            "rocmdemo/libdemo.so",
            "rocmdemo-0.1.dist-info/METADATA",
            "rocmdemo-0.1.dist-info/WHEEL",
            "rocmdemo-0.1.dist-info/RECORD",
        ]
    );
    let elfs = v["elf_files"].as_array().unwrap();
    assert_eq!(elfs.len(), 1);
    assert_eq!(elfs[0]["path"], "rocmdemo/libdemo.so");
    assert_eq!(
        elfs[0]["runpath"],
        serde_json::json!(["$ORIGIN/../rocm/lib"])
    );
    let bundles = v["bundle_files"].as_array().unwrap();
    assert_eq!(bundles.len(), 1);
    assert_eq!(bundles[0]["path"], "rocmdemo/kernels.hipfb");
    assert_eq!(
        bundles[0]["targets"],
        serde_json::json!({"gfx906": 1, "gfx90a": 1})
    );
    assert!(r.to_text().starts_with(&format!("wheel {WHEEL}\n")));
}

#[test]
fn free_threaded_wheels_and_their_module_suffixes() {
    // test_support's make_wheel: tags from the name (this file has its own).
    let dir = tempfile::tempdir().unwrap();
    let ft = (
        "pkg/_m.cpython-314t-x86_64-linux-gnu.so",
        b"not read as a module".to_vec(),
    );
    let gil = (
        "pkg/_g.cpython-314-x86_64-linux-gnu.so",
        b"not read as a module".to_vec(),
    );
    let whl = test_support::wheel::make_wheel(
        dir.path(),
        "ft-1.0-cp314-cp314t-manylinux_2_28_x86_64.whl",
        false,
        std::slice::from_ref(&ft),
    );
    let r = inspect(&whl).unwrap();
    let text = r.to_text();
    assert!(r.wheel.unwrap().free_threaded);
    assert!(
        text.contains("cp314-cp314t-manylinux_2_28_x86_64 (free-threaded CPython)"),
        "{text}"
    );
    // A module built with the GIL in a cp314t wheel: refused, named.
    let mixed = dir.path().join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    let whl = test_support::wheel::make_wheel(
        &mixed,
        "ft-1.0-cp314-cp314t-manylinux_2_28_x86_64.whl",
        false,
        &[ft, gil.clone()],
    );
    let e = format!("{:#}", inspect(&whl).unwrap_err());
    assert!(
        e.contains("pkg/_g.cpython-314-x86_64-linux-gnu.so") && e.contains("cp314, with the GIL"),
        "{e}"
    );
    // The GIL build's own wheel is no free-threaded one.
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let whl = test_support::wheel::make_wheel(
        &plain,
        "g-1.0-cp314-cp314-manylinux_2_28_x86_64.whl",
        false,
        &[gil],
    );
    assert!(!inspect(&whl).unwrap().wheel.unwrap().free_threaded);
}

#[test]
fn a_variant_wheels_label() {
    let dir = tempfile::tempdir().unwrap();
    let whl = test_support::wheel::make_wheel(
        dir.path(),
        "v-1.0-py3-none-manylinux_2_28_x86_64.whl",
        false,
        &[],
    );
    let variant = dir
        .path()
        .join("v-1.0-py3-none-manylinux_2_28_x86_64-rocm.whl");
    std::fs::rename(&whl, &variant).unwrap();
    let r = inspect(&variant).unwrap();
    assert!(
        r.to_text().contains("  variant: rocm (PEP 825 draft"),
        "{}",
        r.to_text()
    );
    assert_eq!(
        r.wheel.as_ref().unwrap().variant_label.as_deref(),
        Some("rocm")
    );
    assert!(r.to_json().contains("\"variant_label\": \"rocm\""));
}
