//! Each finding, shown to fire on a synthetic wheel built here with gcc and
//! to stay quiet on a clean one.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{build_so, errors_and_warnings, make_wheel, read, stub_lib};
use manylinux_check::{check_wheel_file, Options, Report, Severity};

/// Shared ELF fixtures, built once per test binary.
struct Fixtures {
    dir: PathBuf,
}

const EXT: &str = ".cpython-312-x86_64-linux-gnu.so";

fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let d = dir.as_path();
        // A libstdc++ stand-in defining two GLIBCXX versions: 3.4.19 is in
        // manylinux_2_17, 3.4.30 first in manylinux_2_35.
        let cxx = stub_lib(
            d,
            "libstdc++.so.6",
            "int old_fn(void){return 1;}\nint new_fn(void){return 2;}\n",
            Some("GLIBCXX_3.4.19 { global: old_fn; local: *; };\nGLIBCXX_3.4.30 { global: new_fn; } GLIBCXX_3.4.19;\n"),
        );
        let z = stub_lib(d, "libz.so.1", "int uncompress2(void){return 0;}\nint inflate(void){return 0;}\n", None);
        let other = stub_lib(d, "libnotthere.so.1", "int nt(void){return 0;}\n", None);
        let hip = stub_lib(d, "libamdhip64.so.6", "int hipMalloc(void){return 0;}\n", None);
        let dep = stub_lib(d, "libdep.so.1", "int dep(void){return 0;}\n", None);
        let s = |p: &Path| p.display().to_string();
        let ext = |name: &str, body: &str, extra: &[String]| {
            let src = format!("{body}\nint PyInit_{name}(void){{return 0;}}\n");
            let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
            build_so(d, &format!("{name}{EXT}"), &src, &refs);
        };
        let new_dtags = "-Wl,--enable-new-dtags".to_string();
        ext("ext_old", "int old_fn(void); int f(void){return old_fn();}", &[s(&cxx)]);
        ext("ext_new", "int new_fn(void); int f(void){return new_fn();}", &[s(&cxx)]);
        ext(
            "ext_dep",
            "int dep(void); int f(void){return dep();}",
            &[s(&dep), new_dtags.clone(), "-Wl,-rpath,$ORIGIN/../pkg.libs".into()],
        );
        ext("ext_dep_norpath", "int dep(void); int f(void){return dep();}", &[s(&dep)]);
        ext("ext_other", "int nt(void); int f(void){return nt();}", &[s(&other)]);
        ext("ext_hip", "int hipMalloc(void); int f(void){return hipMalloc();}", &[s(&hip)]);
        ext("ext_z", "int uncompress2(void); int f(void){return uncompress2();}", &[s(&z)]);
        ext("ext_z_ok", "int inflate(void); int f(void){return inflate();}", &[s(&z)]);
        ext("ext_isa", "int f(void){return 0;}", &["-Wl,-z,x86-64-v3".into()]);
        let rp = |name: &str, rpath: &str, dtags: &str| {
            ext(name, "int f(void){return 0;}", &[dtags.to_string(), format!("-Wl,-rpath,{rpath}")]);
        };
        rp("rp_solib", "$ORIGIN/../_solib_k8/_U_S_Sfoo", "-Wl,--enable-new-dtags");
        rp("rp_bazelout", "/home/u/.cache/bazel/_bazel_u/1/execroot/_main/bazel-out/k8-opt/bin/lib", "-Wl,--enable-new-dtags");
        rp("rp_tmp", "/tmp/build/lib", "-Wl,--enable-new-dtags");
        rp("rp_abs", "/usr/local/lib", "-Wl,--enable-new-dtags");
        rp("rp_rocm", "/opt/rocm/lib", "-Wl,--enable-new-dtags");
        rp("rp_rocm_versioned", "/opt/rocm-7.2.0/lib", "-Wl,--enable-new-dtags");
        rp("rp_missing", "$ORIGIN/missing_dir", "-Wl,--enable-new-dtags");
        rp("rp_outside", "$ORIGIN/../rocm_sdk_core/lib", "-Wl,--enable-new-dtags");
        rp("rp_dup", "$ORIGIN:${ORIGIN}/", "-Wl,--enable-new-dtags");
        rp("rp_relative", "lib", "-Wl,--enable-new-dtags");
        rp("rp_empty", "$ORIGIN::", "-Wl,--enable-new-dtags");
        rp("rp_dtrpath", "$ORIGIN", "-Wl,--disable-new-dtags");
        rp("rp_clean", "$ORIGIN/../pkg.libs", "-Wl,--enable-new-dtags");
        Fixtures { dir }
    })
}

impl Fixtures {
    fn ext(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join(format!("{name}{EXT}")))
    }
    fn lib(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join(name))
    }
}

/// Build a wheel from `(member, fixture ext name)` pairs plus extra members.
fn wheel_of(
    file_name: &str,
    exts: &[&str],
    extra: &[(&str, Vec<u8>)],
) -> (tempfile::TempDir, PathBuf) {
    let f = fixtures();
    let tmp = tempfile::tempdir().unwrap();
    let names: Vec<String> = exts.iter().map(|e| format!("pkg/{e}{EXT}")).collect();
    let mut members: Vec<(&str, Vec<u8>)> = names
        .iter()
        .zip(exts)
        .map(|(n, e)| (n.as_str(), f.ext(e)))
        .collect();
    members.push(("pkg/__init__.py", b"".to_vec()));
    for (n, b) in extra {
        members.push((n, b.clone()));
    }
    let path = make_wheel(tmp.path(), file_name, false, &members);
    (tmp, path)
}

fn check(path: &Path) -> Report {
    check_wheel_file(path, &Options::default()).unwrap()
}

fn codes(r: &Report, file_contains: &str, severity: Severity) -> Vec<&'static str> {
    r.findings
        .iter()
        .filter(|f| {
            f.severity == severity && f.file.as_deref().unwrap_or("").contains(file_contains)
        })
        .map(|f| f.code)
        .collect()
}

const M17: &str = "manylinux_2_17_x86_64";

#[test]
fn clean_wheel_has_no_findings() {
    let (_t, w) = wheel_of(
        &format!("clean-1.0-cp312-cp312-{M17}.whl"),
        &["ext_old", "ext_dep"],
        &[("pkg.libs/libdep.so.1", fixtures().lib("libdep.so.1"))],
    );
    let r = check(&w);
    assert_eq!(errors_and_warnings(&r), Vec::<String>::new());
    assert_eq!(r.platform_tag.as_deref(), Some(M17));
    assert_eq!(r.target_policy.as_deref(), Some(M17));
    assert_eq!(r.arch, manylinux_check::Arch::X86_64);
    let dep = r.elfs.iter().find(|e| e.path.contains("ext_dep")).unwrap();
    assert_eq!(
        dep.bundled.get("libdep.so.1").map(String::as_str),
        Some("pkg.libs/libdep.so.1")
    );
    let old = r.elfs.iter().find(|e| e.path.contains("ext_old")).unwrap();
    assert_eq!(old.system, vec!["libstdc++.so.6"]);
    assert!(old.version_requirements["libstdc++.so.6"].contains("GLIBCXX_3.4.19"));
    assert!(!r.has_errors());
    assert_eq!(r.exit_code(), manylinux_check::EXIT_CLEAN);
}

#[test]
fn symbol_versions_newer_than_the_claim() {
    let (_t, w) = wheel_of(&format!("new-1.0-cp312-cp312-{M17}.whl"), &["ext_new"], &[]);
    let r = check(&w);
    assert_eq!(r.platform_tag.as_deref(), Some("manylinux_2_35_x86_64"));
    assert_eq!(
        codes(&r, "ext_new", Severity::Error),
        vec!["symbol-version"]
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.code == "symbol-version")
        .unwrap();
    assert!(
        f.message.contains("GLIBCXX_3.4.30 (libstdc++.so.6)"),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("at most GLIBCXX_3.4.19"),
        "{}",
        f.message
    );
    assert!(f.hint.contains("manylinux_2_35_x86_64"), "{}", f.hint);
    assert!(r
        .findings
        .iter()
        .any(|f| f.code == "platform-tag" && f.severity == Severity::Error && f.file.is_none()));
    assert_eq!(r.exit_code(), manylinux_check::EXIT_FINDINGS);

    // Claiming what it needs is clean ...
    let (_t2, w2) = wheel_of(
        "new-1.0-cp312-cp312-manylinux_2_35_x86_64.whl",
        &["ext_new"],
        &[],
    );
    let r2 = check(&w2);
    assert_eq!(errors_and_warnings(&r2), Vec::<String>::new());
    // ... unless an explicit stricter policy is requested.
    let opts = Options {
        policy: Some("manylinux_2_28".into()),
        ..Options::default()
    };
    let r3 = check_wheel_file(&w2, &opts).unwrap();
    assert_eq!(r3.target_policy.as_deref(), Some("manylinux_2_28_x86_64"));
    assert_eq!(
        codes(&r3, "ext_new", Severity::Error),
        vec!["symbol-version"]
    );
    assert!(!r3.findings.iter().any(|f| f.code == "platform-tag"));
}

#[test]
fn unknown_policy_is_an_error() {
    let (_t, w) = wheel_of(&format!("x-1.0-cp312-cp312-{M17}.whl"), &["ext_old"], &[]);
    let opts = Options {
        policy: Some("manylinux_2_99".into()),
        ..Options::default()
    };
    let e = check_wheel_file(&w, &opts).unwrap_err().to_string();
    assert!(
        e.contains("unknown policy") && e.contains("manylinux_2_28"),
        "{e}"
    );
    // Legacy names are accepted.
    let opts = Options {
        policy: Some("manylinux2014_x86_64".into()),
        ..Options::default()
    };
    assert_eq!(
        check_wheel_file(&w, &opts)
            .unwrap()
            .target_policy
            .as_deref(),
        Some(M17)
    );
}

#[test]
fn external_library_and_allowlist() {
    let (_t, w) = wheel_of(
        &format!("ext-1.0-cp312-cp312-{M17}.whl"),
        &["ext_other", "ext_hip"],
        &[],
    );
    let r = check(&w);
    assert_eq!(
        codes(&r, "ext_other", Severity::Error),
        vec!["external-library"]
    );
    assert!(codes(&r, "ext_hip", Severity::Error).is_empty());
    assert_eq!(
        codes(&r, "ext_hip", Severity::Info),
        vec!["allowed-external"]
    );
    assert_eq!(r.platform_tag.as_deref(), Some("linux_x86_64"));
    let hint = &r
        .findings
        .iter()
        .find(|f| f.code == "external-library")
        .unwrap()
        .hint;
    assert!(
        hint.contains("--allow-external 'libnotthere.so.*'"),
        "{hint}"
    );

    let mut opts = Options::default();
    opts.allow_external.push("libnotthere.so.*".into());
    let r = check_wheel_file(&w, &opts).unwrap();
    assert!(!r.has_errors(), "{:?}", errors_and_warnings(&r));
    assert_eq!(r.platform_tag.as_deref(), Some("manylinux_2_5_x86_64"));

    // Without the built-in ROCm list, the HIP runtime is an external library.
    let opts = Options {
        allow_external: vec![],
        ..Options::default()
    };
    let r = check_wheel_file(&w, &opts).unwrap();
    assert_eq!(
        codes(&r, "ext_hip", Severity::Error),
        vec!["external-library"]
    );
}

#[test]
fn bundled_library_outside_the_search_path() {
    let (_t, w) = wheel_of(
        &format!("nr-1.0-cp312-cp312-{M17}.whl"),
        &["ext_dep_norpath"],
        &[("pkg.libs/libdep.so.1", fixtures().lib("libdep.so.1"))],
    );
    let r = check(&w);
    let f = r
        .findings
        .iter()
        .find(|f| f.code == "unreachable-library")
        .expect("unreachable-library");
    assert!(f.hint.contains("$ORIGIN/../pkg.libs"), "{}", f.hint);
    assert_eq!(r.platform_tag.as_deref(), Some("linux_x86_64"));
}

#[test]
fn forbidden_symbols() {
    let (_t, w) = wheel_of(&format!("z-1.0-cp312-cp312-{M17}.whl"), &["ext_z"], &[]);
    let r = check(&w);
    assert_eq!(
        codes(&r, "ext_z", Severity::Error),
        vec!["forbidden-symbol"]
    );
    assert!(r.findings.iter().any(|f| f.message.contains("uncompress2")));
    // manylinux_2_34 lifts uncompress2 from the list.
    assert_eq!(r.platform_tag.as_deref(), Some("manylinux_2_34_x86_64"));
    // Ordinary zlib symbols are fine.
    let (_t2, w2) = wheel_of(&format!("z-1.0-cp312-cp312-{M17}.whl"), &["ext_z_ok"], &[]);
    let r2 = check(&w2);
    assert!(codes(&r2, "ext_z_ok", Severity::Error).is_empty());
}

#[test]
fn isa_level_above_baseline() {
    let (_t, w) = wheel_of(
        &format!("isa-1.0-cp312-cp312-{M17}.whl"),
        &["ext_isa", "ext_old"],
        &[],
    );
    let r = check(&w);
    assert_eq!(codes(&r, "ext_isa", Severity::Error), vec!["isa-extension"]);
    assert!(codes(&r, "ext_old", Severity::Error).is_empty());
    let e = r.elfs.iter().find(|e| e.path.contains("ext_isa")).unwrap();
    assert_eq!(e.isa_needed.as_deref(), Some("x86_64_v3"));
    assert_eq!(r.platform_tag.as_deref(), Some("linux_x86_64"));
}

#[test]
fn rpath_hygiene() {
    let all = [
        "rp_solib",
        "rp_bazelout",
        "rp_tmp",
        "rp_abs",
        "rp_rocm",
        "rp_rocm_versioned",
        "rp_missing",
        "rp_outside",
        "rp_dup",
        "rp_relative",
        "rp_empty",
        "rp_dtrpath",
        "rp_clean",
    ];
    let (_t, w) = wheel_of(
        &format!("rp-1.0-cp312-cp312-{M17}.whl"),
        &all,
        &[("pkg.libs/libdep.so.1", fixtures().lib("libdep.so.1"))],
    );
    let r = check(&w);
    let rpath_codes = |name: &str| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = r
            .findings
            .iter()
            .filter(|f| {
                f.file
                    .as_deref()
                    .is_some_and(|p| p.contains(&format!("/{name}.")))
            })
            .map(|f| f.code)
            .collect();
        v.sort();
        v
    };
    assert_eq!(rpath_codes("rp_solib"), vec!["rpath-build-tree"]);
    assert_eq!(rpath_codes("rp_bazelout"), vec!["rpath-build-tree"]);
    assert_eq!(rpath_codes("rp_tmp"), vec!["rpath-build-tree"]);
    assert_eq!(rpath_codes("rp_abs"), vec!["rpath-absolute"]);
    // /opt/rocm/lib is allowed by default; a versioned one is not.
    assert_eq!(rpath_codes("rp_rocm"), Vec::<&str>::new());
    assert_eq!(rpath_codes("rp_rocm_versioned"), vec!["rpath-absolute"]);
    assert_eq!(rpath_codes("rp_missing"), vec!["rpath-missing-target"]);
    assert_eq!(rpath_codes("rp_outside"), vec!["rpath-outside-wheel"]);
    assert_eq!(rpath_codes("rp_dup"), vec!["rpath-duplicate"]);
    assert_eq!(rpath_codes("rp_relative"), vec!["rpath-relative"]);
    assert_eq!(rpath_codes("rp_empty"), vec!["rpath-empty-entry"]);
    assert_eq!(rpath_codes("rp_dtrpath"), vec!["dt-rpath"]);
    assert_eq!(rpath_codes("rp_clean"), Vec::<&str>::new());
    let sev = |code: &str| r.findings.iter().find(|f| f.code == code).unwrap().severity;
    assert_eq!(sev("rpath-build-tree"), Severity::Error);
    assert_eq!(sev("rpath-missing-target"), Severity::Warning);
    assert_eq!(sev("rpath-outside-wheel"), Severity::Info);
    assert_eq!(sev("dt-rpath"), Severity::Info);
    let e = r
        .elfs
        .iter()
        .find(|e| e.path.contains("rp_dtrpath"))
        .unwrap();
    assert_eq!(e.rpath, vec!["$ORIGIN"]);
    assert!(e.runpath.is_empty());

    // An allowed prefix silences the absolute-path finding.
    let opts = Options {
        allow_rpath_prefixes: vec!["/usr/local".into()],
        ..Options::default()
    };
    let r2 = check_wheel_file(&w, &opts).unwrap();
    let absolute: Vec<&str> = (r2.findings.iter())
        .filter(|f| f.code == "rpath-absolute")
        .filter_map(|f| f.file.as_deref())
        .collect();
    // The list replaces the default one: /opt/rocm/lib is no longer allowed.
    assert_eq!(absolute.len(), 2, "{absolute:?}");
    assert!(
        absolute.iter().all(|f| f.contains("rp_rocm")),
        "{absolute:?}"
    );
}

/// A missing directory in a namespace package (no __init__.py, shared with
/// other wheels, like jax_plugins/) is not this wheel's to provide.
#[test]
fn rpath_into_a_namespace_package_is_outside_the_wheel() {
    let name = format!("nspkg/sub/rp_missing{EXT}");
    let (_t, w_ns) = wheel_of(
        &format!("ns-1.0-cp312-cp312-{M17}.whl"),
        &[],
        &[(name.as_str(), fixtures().ext("rp_missing"))],
    );
    let r_ns = check(&w_ns);
    let codes_ns: Vec<_> = r_ns
        .findings
        .iter()
        .filter(|f| f.file.is_some())
        .map(|f| f.code)
        .collect();
    assert_eq!(codes_ns, vec!["rpath-outside-wheel"]);
}

#[test]
fn tag_consistency() {
    let f = fixtures();
    // linux_x86_64: fine to build, not uploadable.
    let (_t, w) = wheel_of("l-1.0-cp312-cp312-linux_x86_64.whl", &["ext_old"], &[]);
    let r = check(&w);
    assert!(!r.has_errors(), "{:?}", errors_and_warnings(&r));
    let nu = r
        .findings
        .iter()
        .find(|f| f.code == "not-uploadable")
        .unwrap();
    assert_eq!(nu.severity, Severity::Warning);
    assert!(nu.hint.contains(M17), "{}", nu.hint);

    // 'any' platform with an ELF inside.
    let (_t, w) = wheel_of("a-1.0-py3-none-any.whl", &["ext_old"], &[]);
    let r = check(&w);
    assert!(r
        .findings
        .iter()
        .any(|f| f.code == "pure-wheel-with-binaries" && f.severity == Severity::Error));

    // Root-Is-Purelib: true with an ELF at the root.
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("pkg/ext_old{EXT}");
    let w = make_wheel(
        tmp.path(),
        &format!("p-1.0-cp312-cp312-{M17}.whl"),
        true,
        &[(&name, f.ext("ext_old"))],
    );
    let r = check(&w);
    assert_eq!(
        codes(&r, "ext_old", Severity::Error),
        vec!["purelib-with-binaries"]
    );

    // ELF files under *.data/purelib are purelib too; *.data/platlib is fine.
    let (_t, w) = wheel_of(
        &format!("d-1.0-cp312-cp312-{M17}.whl"),
        &[],
        &[
            ("d-1.0.data/purelib/pkg/_a.so", f.ext("ext_old")),
            ("d-1.0.data/platlib/pkg/_b.so", f.ext("ext_old")),
        ],
    );
    let r = check(&w);
    assert_eq!(
        codes(&r, "purelib/pkg/_a.so", Severity::Error),
        vec!["purelib-with-binaries"]
    );
    assert!(codes(&r, "platlib/pkg/_b.so", Severity::Error).is_empty());

    // Claiming a newer policy than needed is only a note.
    let (_t, w) = wheel_of(
        "n-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        &["ext_old"],
        &[],
    );
    let r = check(&w);
    assert!(!r.has_errors());
    let note = r
        .findings
        .iter()
        .find(|f| f.code == "platform-tag")
        .unwrap();
    assert_eq!(note.severity, Severity::Info);
    assert!(note.message.contains(M17), "{}", note.message);
}

#[test]
fn json_and_human_output() {
    let (_t, w) = wheel_of(&format!("new-1.0-cp312-cp312-{M17}.whl"), &["ext_new"], &[]);
    let r = check(&w);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["platform_tag"], "manylinux_2_35_x86_64");
    assert_eq!(v["summary"]["errors"], 2);
    let f0 = &v["findings"][0];
    for key in ["severity", "code", "file", "message", "hint"] {
        assert!(f0.get(key).is_some(), "finding lacks {key}");
    }
    assert_eq!(
        v["elfs"][0]["version_requirements"]["libstdc++.so.6"][0],
        "GLIBCXX_3.4.30"
    );
    let human = r.to_human();
    let lines: Vec<&str> = human.lines().collect();
    assert_eq!(lines.len(), 3, "{human}");
    assert!(lines
        .iter()
        .any(|l| l.starts_with("error[symbol-version] pkg/ext_new") && l.contains("; fix: ")));
    assert!(lines[2].contains("consistent with platform tag manylinux_2_35_x86_64"));
}

#[test]
fn unreadable_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    // Not a zip.
    let p = tmp.path().join("junk-1.0-py3-none-any.whl");
    std::fs::write(&p, b"this is not a zip file").unwrap();
    let e = format!(
        "{:#}",
        check_wheel_file(&p, &Options::default()).unwrap_err()
    );
    assert!(e.contains("not a zip archive"), "{e}");
    // A zip without WHEEL metadata.
    let p = tmp.path().join("nowheel.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
        z.start_file("hello.txt", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut z, b"hi").unwrap();
        z.finish().unwrap();
    }
    let e = format!(
        "{:#}",
        check_wheel_file(&p, &Options::default()).unwrap_err()
    );
    assert!(
        e.contains("not a wheel") && e.contains("dist-info/WHEEL"),
        "{e}"
    );
    // Missing file.
    let e = format!(
        "{:#}",
        check_wheel_file(&tmp.path().join("nope.whl"), &Options::default()).unwrap_err()
    );
    assert!(e.contains("cannot open"), "{e}");
    // Truncated ELF members: cut in the middle, and cut right after the header.
    let full = fixtures().ext("ext_old");
    for cut in [full.len() / 2, 64, 10] {
        let (_t, w) = wheel_of(
            &format!("t-1.0-cp312-cp312-{M17}.whl"),
            &[],
            &[("pkg/_trunc.so", full[..cut].to_vec())],
        );
        let e = format!(
            "{:#}",
            check_wheel_file(&w, &Options::default()).unwrap_err()
        );
        assert!(
            e.contains("pkg/_trunc.so") && e.contains("truncated or corrupt"),
            "cut {cut}: {e}"
        );
        // The same through the sparse reader used for big members.
        let e = format!(
            "{:#}",
            manylinux_check::wheel::read_wheel_with_threshold(&w, 0).unwrap_err()
        );
        assert!(
            e.contains("pkg/_trunc.so") && e.contains("truncated or corrupt"),
            "sparse, cut {cut}: {e}"
        );
    }
}

/// AMDGPU code objects (HIP kernels shipped as files) are device code, not
/// host ELF files: no findings. A host ELF for another CPU is an error.
#[test]
fn device_code_and_foreign_architecture() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("k.c"),
        "__attribute__((visibility(\"default\"))) int k(void){return 1;}\n",
    )
    .unwrap();
    let ok = std::process::Command::new(common::llvm("clang"))
        .args([
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx906",
            "-nogpulib",
            "-c",
        ])
        .arg(d.join("k.c"))
        .arg("-o")
        .arg(d.join("k.o"))
        .status()
        .unwrap();
    assert!(ok.success());
    let ok = std::process::Command::new(common::llvm("ld.lld"))
        .arg("-shared")
        .arg(d.join("k.o"))
        .arg("-o")
        .arg(d.join("k.co"))
        .status()
        .unwrap();
    assert!(ok.success());
    // The same x86_64 extension relabelled as aarch64 (e_machine at byte 18).
    let mut foreign = fixtures().ext("ext_old");
    foreign[18..20].copy_from_slice(&183u16.to_le_bytes());
    let (_t, w) = wheel_of(
        &format!("dev-1.0-cp312-cp312-{M17}.whl"),
        &["ext_old"],
        &[
            ("pkg/kernels/k.gfx906.co", read(&d.join("k.co"))),
            ("pkg/_arm.so", foreign),
        ],
    );
    let r = check(&w);
    assert!(codes(&r, "k.gfx906.co", Severity::Error).is_empty());
    assert!(codes(&r, "k.gfx906.co", Severity::Warning).is_empty());
    let dev = r.elfs.iter().find(|e| e.path.ends_with(".co")).unwrap();
    assert_eq!(dev.machine, "amdgpu");
    assert_eq!(dev.platform_tag, None);
    assert_eq!(
        codes(&r, "_arm.so", Severity::Error),
        vec!["foreign-architecture"]
    );
    // The x86_64 files alone decide the tag.
    assert_eq!(r.platform_tag.as_deref(), Some(M17));

    // A wheel for a CPU without known policies is out of scope: an input
    // error, not findings (EM_PPC64 = 21).
    let mut ppc = fixtures().ext("ext_old");
    ppc[18..20].copy_from_slice(&21u16.to_le_bytes());
    let (_t, w) = wheel_of(
        "ppc-1.0-cp312-cp312-manylinux_2_17_ppc64le.whl",
        &[],
        &[("pkg/_ppc.so", ppc)],
    );
    let e = format!(
        "{:#}",
        check_wheel_file(&w, &Options::default()).unwrap_err()
    );
    assert!(
        e.contains("a wheel for ppc64le") && e.contains("policies of x86_64 and aarch64 only"),
        "{e}"
    );
}

/// Reading ELF members sparsely (as done for members over 32 MiB) gives
/// the same report as reading them whole.
#[test]
fn sparse_reading_gives_the_same_report() {
    let (_t, w) = wheel_of(
        &format!("sp-1.0-cp312-cp312-{M17}.whl"),
        &[
            "ext_old",
            "ext_new",
            "ext_dep",
            "ext_z",
            "ext_isa",
            "rp_dtrpath",
        ],
        &[("pkg.libs/libdep.so.1", fixtures().lib("libdep.so.1"))],
    );
    let whole = check(&w);
    let wheel = manylinux_check::wheel::read_wheel_with_threshold(&w, 0).unwrap();
    let sparse = manylinux_check::check_wheel(&wheel, &Options::default()).unwrap();
    assert_eq!(sparse.to_json(), whole.to_json());
    assert!(whole.has_errors(), "the fixture should exercise findings");
}

/// Rewrites the zip at `w` with `edit` applied to its `(name, bytes)` list
/// (RECORD is left as it was, so it no longer describes the members).
fn tamper(w: &Path, edit: impl FnOnce(&mut Vec<(String, Vec<u8>)>)) {
    use std::io::{Read, Write};
    let mut zip = zip::ZipArchive::new(std::fs::File::open(w).unwrap()).unwrap();
    let mut members = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        members.push((f.name().to_string(), b));
    }
    edit(&mut members);
    let mut out = zip::ZipWriter::new(std::fs::File::create(w).unwrap());
    for (n, b) in members {
        out.start_file(n, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&b).unwrap();
    }
    out.finish().unwrap();
}

/// Members that do not match RECORD make the wheel unreadable input (exit
/// 2), with the member named, whether it is an ELF file read whole or
/// sparsely, or any other file.
#[test]
fn record_mismatches_are_unreadable_input() {
    let so = format!("pkg/ext_old{EXT}");
    const DIST_RECORD: &str = "rec-1.0.dist-info/RECORD";
    let dist_record = DIST_RECORD;
    type Edit = Box<dyn FnOnce(&mut Vec<(String, Vec<u8>)>)>;
    let flip = |target: String| -> Edit {
        Box::new(move |m| {
            let b = &mut m.iter_mut().find(|(n, _)| *n == target).unwrap().1;
            let mid = b.len() / 2;
            b[mid] ^= 0x55;
        })
    };
    let cases: Vec<(Edit, String)> = vec![
        (flip(so.clone()), format!("RECORD hash mismatch for {so}")),
        (
            flip("pkg/data.bin".into()),
            "RECORD hash mismatch for pkg/data.bin".into(),
        ),
        (
            Box::new(|m| m.push(("pkg/extra.txt".into(), b"x".to_vec()))),
            format!("pkg/extra.txt is not listed in {dist_record}"),
        ),
        (
            Box::new(|m| m.retain(|(n, _)| n != "pkg/data.bin")),
            format!("{dist_record} lists pkg/data.bin, which is not in the wheel"),
        ),
        (
            Box::new(|m| m.retain(|(n, _)| n != DIST_RECORD)),
            format!("not a valid wheel: {dist_record} is missing"),
        ),
    ];
    for (edit, want) in cases {
        let (_t, w) = wheel_of(
            &format!("rec-1.0-cp312-cp312-{M17}.whl"),
            &["ext_old"],
            &[("pkg/data.bin", vec![7u8; 1000])],
        );
        // Untampered, the wheel is fine.
        check(&w);
        tamper(&w, edit);
        let e = format!(
            "{:#}",
            check_wheel_file(&w, &Options::default()).unwrap_err()
        );
        assert!(e.contains(&want), "want `{want}`, got: {e}");
        let e = format!(
            "{:#}",
            manylinux_check::wheel::read_wheel_with_threshold(&w, 0).unwrap_err()
        );
        assert!(e.contains(&want), "sparse: want `{want}`, got: {e}");
    }
}

#[test]
fn extension_suffixes_against_the_abi_tag() {
    let f = fixtures();
    let ft = "pkg/_ft.cpython-314t-x86_64-linux-gnu.so";
    let gil = "pkg/_gil.cpython-314-x86_64-linux-gnu.so";
    let wheel = |file_name: &str, modules: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let mut members: Vec<(&str, Vec<u8>)> =
            modules.iter().map(|m| (*m, f.ext("ext_old"))).collect();
        members.push(("pkg/__init__.py", b"".to_vec()));
        let path = make_wheel(tmp.path(), file_name, false, &members);
        (tmp, path)
    };
    // A free-threaded wheel of free-threaded modules is clean ...
    let (_t, w) = wheel(&format!("ft-1.0-cp314-cp314t-{M17}.whl"), &[ft]);
    let r = check(&w);
    assert_eq!(errors_and_warnings(&r), Vec::<String>::new());
    // ... a module built with the GIL in it is refused, naming both ABIs.
    let (_t, w) = wheel(&format!("ft-1.0-cp314-cp314t-{M17}.whl"), &[ft, gil]);
    let r = check(&w);
    assert_eq!(codes(&r, "_gil", Severity::Error), vec!["extension-abi"]);
    assert!(codes(&r, "_ft", Severity::Error).is_empty());
    let finding = r
        .findings
        .iter()
        .find(|f| f.code == "extension-abi")
        .unwrap();
    assert!(
        finding.message.contains("cp314, with the GIL")
            && finding.message.contains("ABI tag is cp314t"),
        "{}",
        finding.message
    );
    assert_eq!(r.exit_code(), manylinux_check::EXIT_FINDINGS);
    // And the reverse: a free-threaded module in a wheel tagged cp314.
    let (_t, w) = wheel(&format!("gil-1.0-cp314-cp314-{M17}.whl"), &[gil, ft]);
    let r = check(&w);
    assert_eq!(codes(&r, "_ft", Severity::Error), vec!["extension-abi"]);
    assert!(codes(&r, "_gil", Severity::Error).is_empty());
}
