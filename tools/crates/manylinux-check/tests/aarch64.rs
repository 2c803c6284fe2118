//! aarch64 wheels, built here with the build root's clang and lld: judged
//! with the aarch64 policies, and an aarch64 file in an x86_64 wheel (or
//! the reverse) is foreign.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{
    build_elf, build_so_for, errors_and_warnings, glibc_stub, make_wheel, read, stub_lib_for, Cpu,
};
use manylinux_check::{check_wheel_file, Arch, Finding, Options, Report, Severity};

const A17: &str = "manylinux_2_17_aarch64";
const A28: &str = "manylinux_2_28_aarch64";
/// Where the tool's own wheel keeps its executable.
const SCRIPT: &str = "rocm_wheel-0.1.0.data/scripts/rocm-wheel";

/// ELF files built once per test binary.
struct Fixtures {
    dir: PathBuf,
}

fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let d = dir.as_path();
        let arm = Cpu::Aarch64;
        let libc = glibc_stub(arm, d);
        // The other libraries the tool's executable needs, as its real one does.
        let mut libs = vec![libc.display().to_string()];
        for (soname, sym) in [
            ("libm.so.6", "m"),
            ("libgcc_s.so.1", "gcc_s"),
            ("libpthread.so.0", "pthread"),
            ("libdl.so.2", "dl"),
            ("ld-linux-aarch64.so.1", "ld"),
        ] {
            let src = format!("int {sym}_fn(void){{return 0;}}\n");
            libs.push(stub_lib_for(arm, d, soname, &src, None).display().to_string());
        }
        let calls = "int old_fn(void); int m_fn(void); int gcc_s_fn(void); int pthread_fn(void); int dl_fn(void); int ld_fn(void);\n";
        let exe_src = format!(
            "{calls}void _start(void){{old_fn(); m_fn(); gcc_s_fn(); pthread_fn(); dl_fn(); ld_fn();}}\n"
        );
        let mut args = vec![
            "-fPIE".to_string(),
            "-pie".into(),
            "-Wl,--dynamic-linker=/lib/ld-linux-aarch64.so.1".into(),
        ];
        args.extend(libs);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        build_elf(arm, d, "rocm-wheel", &exe_src, &refs);
        let ext = |name: &str, body: &str| {
            let src = format!("{body}\nint PyInit_{name}(void){{return 0;}}\n");
            build_so_for(arm, d, &format!("{name}.so"), &src, &[&libc.display().to_string()]);
        };
        ext("ext17", "int old_fn(void); int f(void){return old_fn();}");
        ext("ext28", "int new_fn(void); int f(void){return new_fn();}");
        // An x86_64 file for the aarch64 wheel to hold by mistake.
        build_so_for(Cpu::X86_64, d, "x86.so", "int f(void){return 0;}\n", &[]);
        Fixtures { dir }
    })
}

impl Fixtures {
    fn file(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join(name))
    }
}

/// A wheel named `file_name` holding `members` (fixture file names) at
/// the given paths, and a pure-Python module.
fn wheel_of(file_name: &str, members: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, Vec<u8>)> = members
        .iter()
        .map(|(path, fixture)| (*path, fixtures().file(fixture)))
        .collect();
    all.push(("rocm_wheel/__init__.py", b"".to_vec()));
    let path = make_wheel(tmp.path(), file_name, false, &all);
    (tmp, path)
}

fn check(path: &Path) -> Report {
    check_wheel_file(path, &Options::default()).unwrap()
}

fn with_policy(path: &Path, policy: &str) -> anyhow::Result<Report> {
    let opts = Options {
        policy: Some(policy.into()),
        ..Options::default()
    };
    check_wheel_file(path, &opts)
}

fn codes(r: &Report, severity: Severity) -> Vec<&'static str> {
    (r.findings.iter())
        .filter(|f| f.severity == severity)
        .map(|f| f.code)
        .collect()
}

/// The shape of the tool's own aarch64 wheel: one executable under
/// `.data/scripts` needing glibc up to 2.17 and the usual system
/// libraries, plus Python files.
#[test]
fn the_tools_wheel_is_manylinux_2_17_aarch64() {
    let name = format!("rocm_wheel-0.1.0-py3-none-{A17}.whl");
    let (_t, w) = wheel_of(&name, &[(SCRIPT, "rocm-wheel")]);
    let r = check(&w);
    assert_eq!(errors_and_warnings(&r), Vec::<String>::new());
    assert_eq!(r.arch, Arch::Aarch64);
    assert_eq!(r.platform_tag.as_deref(), Some(A17));
    assert_eq!(r.target_policy.as_deref(), Some(A17));
    let exe = &r.elfs[0];
    assert_eq!(
        (exe.path.as_str(), exe.machine.as_str()),
        (SCRIPT, "aarch64")
    );
    assert_eq!(exe.kind, manylinux_check::ElfKind::Executable);
    assert_eq!(exe.platform_tag.as_deref(), Some(A17));
    assert!(exe.unresolved.is_empty(), "{:?}", exe.unresolved);
    for lib in ["libc.so.6", "libgcc_s.so.1", "ld-linux-aarch64.so.1"] {
        assert!(
            exe.system.iter().any(|s| s == lib),
            "{lib}: {:?}",
            exe.system
        );
    }
    assert!(r.to_json().contains("\"arch\": \"aarch64\""));
    // A policy without a suffix is the wheel's architecture's.
    for policy in ["manylinux_2_17", "manylinux2014", "manylinux2014_aarch64"] {
        let r = with_policy(&w, policy).unwrap();
        assert_eq!(r.target_policy.as_deref(), Some(A17), "{policy}");
        assert!(!r.has_errors(), "{policy}: {}", r.to_human());
    }
}

#[test]
fn glibc_2_28_needs_manylinux_2_28_aarch64() {
    let (_t, w) = wheel_of(
        &format!("e-1.0-cp312-cp312-{A28}.whl"),
        &[("pkg/_e.so", "ext28.so")],
    );
    let r = check(&w);
    assert_eq!(errors_and_warnings(&r), Vec::<String>::new());
    assert_eq!(r.platform_tag.as_deref(), Some(A28));

    // Claiming manylinux_2_17 is refused, with the aarch64 policy's glibc.
    let (_t, w) = wheel_of(
        &format!("e-1.0-cp312-cp312-{A17}.whl"),
        &[("pkg/_e.so", "ext28.so")],
    );
    let r = check(&w);
    assert_eq!(r.platform_tag.as_deref(), Some(A28));
    // Wheel-level findings (no file) sort first.
    assert_eq!(
        codes(&r, Severity::Error),
        ["platform-tag", "symbol-version"]
    );
    let f = finding(&r, "symbol-version");
    assert!(
        f.message.contains(
            "requires GLIBC_2.28 (libc.so.6), but manylinux_2_17_aarch64 allows at most GLIBC_2.18"
        ) && f.hint.contains(A28),
        "{f:?}"
    );
    let f = finding(&r, "platform-tag");
    assert!(f.hint.contains(&format!("retag as {A28}")), "{f:?}");

    // And the 2.17 extension meets the claim.
    let (_t, w) = wheel_of(
        &format!("e-1.0-cp312-cp312-{A17}.whl"),
        &[("pkg/_e.so", "ext17.so")],
    );
    assert_eq!(errors_and_warnings(&check(&w)), Vec::<String>::new());
}

/// `--policy` is read in the wheel's architecture: another's suffix, or a
/// policy it does not have, is an input error naming its policies.
#[test]
fn policies_of_another_architecture_are_refused() {
    let (_t, w) = wheel_of(
        &format!("e-1.0-cp312-cp312-{A28}.whl"),
        &[("pkg/_e.so", "ext28.so")],
    );
    let e = format!(
        "{:#}",
        with_policy(&w, "manylinux_2_28_x86_64").unwrap_err()
    );
    assert!(
        e.contains("is for x86_64, but")
            && e.contains("is for aarch64")
            && e.contains("--policy manylinux_2_28 "),
        "{e}"
    );
    for policy in ["manylinux1", "manylinux_2_5"] {
        let e = format!("{:#}", with_policy(&w, policy).unwrap_err());
        assert!(
            e.contains("for aarch64") && e.contains("aarch64: manylinux_2_17, manylinux_2_24"),
            "{e}"
        );
    }
    let r = with_policy(&w, "manylinux_2_24").unwrap();
    assert_eq!(r.target_policy.as_deref(), Some("manylinux_2_24_aarch64"));
    assert_eq!(codes(&r, Severity::Error), ["symbol-version"]);
}

/// The tag decides the architecture: an aarch64 file in an x86_64 wheel,
/// or an x86_64 one in an aarch64 wheel, is foreign.
#[test]
fn a_file_for_another_cpu_than_the_tag_is_foreign() {
    let r = check(
        &wheel_of(
            "e-1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
            &[("pkg/_e.so", "ext17.so")],
        )
        .1,
    );
    assert_eq!(r.arch, Arch::X86_64);
    let f = only_error(&r, "foreign-architecture", "pkg/_e.so");
    assert!(
        f.message
            .contains("is an ELF file for aarch64, in a wheel checked for x86_64")
            && f.hint.contains("build it for x86_64"),
        "{f:?}"
    );
    assert_eq!(r.platform_tag, None);
    assert_eq!(r.elfs[0].platform_tag, None);

    let r = check(
        &wheel_of(
            &format!("e-1.0-cp312-cp312-{A17}.whl"),
            &[("pkg/_e.so", "ext17.so"), ("pkg/_x.so", "x86.so")],
        )
        .1,
    );
    let f = only_error(&r, "foreign-architecture", "pkg/_x.so");
    assert!(
        f.message
            .contains("is an ELF file for x86_64, in a wheel checked for aarch64"),
        "{f:?}"
    );
    // The aarch64 file alone decides the tag.
    assert_eq!(r.platform_tag.as_deref(), Some(A17));
}

/// The report's first finding with `code`.
fn finding<'a>(r: &'a Report, code: &str) -> &'a Finding {
    let found = r.findings.iter().find(|f| f.code == code);
    found.unwrap_or_else(|| panic!("no {code} finding: {}", r.to_human()))
}

/// The report's one error, which must have `code` and be about `file`.
fn only_error<'a>(r: &'a Report, code: &str, file: &str) -> &'a Finding {
    assert_eq!(codes(r, Severity::Error), [code], "{}", r.to_human());
    let f = &r.findings[0];
    assert_eq!(f.file.as_deref(), Some(file));
    f
}

/// Tags that name no CPU leave it to the host ELF files, which must agree.
#[test]
fn without_a_cpu_in_the_tag_the_files_decide() {
    let (_t, w) = wheel_of("e-1.0-py3-none-any.whl", &[("pkg/_e.so", "ext17.so")]);
    let r = check(&w);
    assert_eq!(r.arch, Arch::Aarch64);
    assert_eq!(codes(&r, Severity::Error), ["pure-wheel-with-binaries"]);
    let f = &r.findings[0];
    assert!(f.message.contains("1 aarch64 ELF file(s)"), "{}", f.message);
    assert!(f.hint.contains(A17), "{}", f.hint);

    let (_t, w) = wheel_of(
        "e-1.0-py3-none-any.whl",
        &[("pkg/_e.so", "ext17.so"), ("pkg/_x.so", "x86.so")],
    );
    let e = format!(
        "{:#}",
        check_wheel_file(&w, &Options::default()).unwrap_err()
    );
    assert!(
        e.contains("x86_64 (pkg/_x.so) and aarch64 (pkg/_e.so)")
            && e.contains("one wheel per architecture"),
        "{e}"
    );

    // linux_aarch64: judged for aarch64, with the manylinux tag to use.
    let (_t, w) = wheel_of(
        "e-1.0-cp312-cp312-linux_aarch64.whl",
        &[("pkg/_e.so", "ext28.so")],
    );
    let r = check(&w);
    assert_eq!(r.platform_tag.as_deref(), Some(A28));
    assert_eq!(codes(&r, Severity::Warning), ["not-uploadable"]);
    assert!(r.findings[0].hint.contains(&format!("retag as {A28}")));
}
