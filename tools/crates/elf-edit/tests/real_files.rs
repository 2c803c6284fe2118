//! Edits real libraries and executables and checks them against binutils,
//! patchelf, goblin, the dynamic loader and the kernel.

mod common;
use common::*;
use elf_edit::{Edit, Method, RpathKind};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

const LONG: &str =
    "$ORIGIN/../rocm/lib:$ORIGIN:$ORIGIN/../lib/with/a/rather/long/path/to/make/it/grow";

/// Loads `lib` with a pyenv CPython's ctypes and returns what `expr`
/// (evaluated with `l` bound to the library) prints.
fn ctypes_eval(lib: &Path, expr: &str) -> String {
    let code = format!("import ctypes, sys\nl = ctypes.CDLL(sys.argv[1])\nprint({expr})");
    run_stdout(Command::new(python("3.12")).arg("-c").arg(code).arg(lib))
}

#[test]
fn debian_libz_grows_loads_and_matches_patchelf() {
    let d = tempdir();
    let input = copy_in(&Path::new(SYSLIB).join("libz.so.1"), d.path(), "libz.so.1");
    let out = edit_and_compare(&input, d.path(), &set(LONG, RpathKind::Runpath));
    let expr = "(setattr(l.zlibVersion, 'restype', ctypes.c_char_p), l.zlibVersion())[1]";
    assert_eq!(ctypes_eval(&out, expr), ctypes_eval(&input, expr));
    assert_eq!(
        ctypes_eval(&stripped_path(&out), expr),
        ctypes_eval(&input, expr)
    );
    assert!(ctypes_eval(&out, expr).contains("1."));
    // A second, longer edit on top of our own appended segment.
    let again = d.path().join("again.so");
    let longer = format!("{LONG}:/opt/rocm-7.0.0/lib/llvm/lib");
    let m = elf_edit::edit_file(&out, Some(&again), &set(&longer, RpathKind::Runpath)).unwrap();
    assert!(matches!(m, Method::Appended { .. }));
    check_layout(&again);
    assert_eq!(
        elf_edit::read_rpath(&again).unwrap()[0].value,
        longer.as_bytes()
    );
    assert_eq!(ctypes_eval(&again, expr), ctypes_eval(&input, expr));
}

#[test]
fn debian_libstdcxx_grows_and_loads() {
    let d = tempdir();
    let input = copy_in(
        &Path::new(SYSLIB).join("libstdc++.so.6"),
        d.path(),
        "libstdc++.so.6",
    );
    let out = edit_and_compare(&input, d.path(), &set(LONG, RpathKind::Runpath));
    // std::uncaught_exceptions() is a plain call returning 0 outside a throw.
    let expr = "l._ZSt19uncaught_exceptionsv()";
    assert_eq!(ctypes_eval(&out, expr).trim(), "0");
}

#[test]
fn debian_libamdhip64_grows_and_loads() {
    let d = tempdir();
    // The HIP runtime of the build root's ROCm (libamdhip64.so.<major>).
    let soname = std::fs::read_dir(SYSLIB)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix("libamdhip64.so.")
                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()))
        })
        .max()
        .expect("no libamdhip64.so.<major> in the build root (libamdhip64-dev)");
    let input = copy_in(&Path::new(SYSLIB).join(&soname), d.path(), &soname);
    let out = edit_and_compare(
        &input,
        d.path(),
        &set("$ORIGIN/../rocm/lib:$ORIGIN", RpathKind::Runpath),
    );
    let expr = "(lambda v: (l.hipRuntimeGetVersion(ctypes.byref(v)), v.value))(ctypes.c_int(0))";
    let got = ctypes_eval(&out, expr);
    assert_eq!(got, ctypes_eval(&input, expr));
    assert!(got.starts_with("(0, "), "hipRuntimeGetVersion: {got}");
}

/// A distribution executable that carries a DT_RUNPATH: systemd's busctl
/// (to its private library) on Debian 12, coreutils' expr on sid (the build
/// root), ...
fn executable_with_runpath() -> (PathBuf, String) {
    let candidates = ["/usr/bin/busctl", "/usr/bin/expr", "/usr/bin/factor"];
    for c in candidates {
        let p = Path::new(c);
        if !p.exists() {
            continue;
        }
        let r = elf_edit::read_rpath(p).unwrap();
        if let [e] = r.as_slice() {
            if e.kind == RpathKind::Runpath {
                return (p.to_path_buf(), e.value_lossy());
            }
        }
    }
    panic!(
        "none of {candidates:?} exists with a DT_RUNPATH: run the tests inside the build root: \
         scripts/buildroot cargo test --manifest-path tools/Cargo.toml --locked --workspace"
    )
}

/// `name => path` of what ld.so loads for `exe` (ldd's mechanism).
fn loaded_libraries(exe: &Path) -> Vec<(String, String)> {
    let out = run(Command::new(exe).env("LD_TRACE_LOADED_OBJECTS", "1"));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" => ")?;
            let path = rest.split(" (").next()?.to_string();
            Some((name.to_string(), path))
        })
        .collect()
}

#[test]
fn usr_bin_executables_still_run() {
    let d = tempdir();
    let (orig, existing) = executable_with_runpath();
    let exe = copy_in(&orig, d.path(), "exe");
    let want = run_stdout(Command::new(&exe).arg("--version"));
    // Its first library other than libc, copied where only the new RUNPATH
    // leads: the edited executable must load that copy.
    let (lib, from) = loaded_libraries(&exe)
        .into_iter()
        .find(|(n, _)| !n.starts_with("libc.so"))
        .unwrap_or_else(|| panic!("{} needs no library but libc", orig.display()));
    let private = d.path().join("private-libraries");
    std::fs::create_dir(&private).unwrap();
    std::fs::copy(&from, private.join(&lib)).unwrap();
    // The existing entries stay: the executable may need more than one
    // library from its own RUNPATH directory (systemd's do).
    for rpath in [
        format!("{}:{existing}", private.display()),
        format!("$ORIGIN/private-libraries:{existing}:$ORIGIN/../lib/x86_64-linux-gnu/more"),
    ] {
        let out = edit_and_compare(&exe, d.path(), &set(&rpath, RpathKind::Runpath));
        assert_eq!(run_stdout(Command::new(&out).arg("--version")), want);
        let loaded = loaded_libraries(&out);
        let got = loaded.iter().find(|(n, _)| *n == lib).map(|(_, p)| p);
        assert_eq!(
            got.map(PathBuf::from),
            Some(private.join(&lib)),
            "{rpath}: {loaded:?}"
        );
    }
    // Not longer than the existing value: rewritten in place, same size.
    let short = d.path().join("exe-short");
    let m = elf_edit::edit_file(&exe, Some(&short), &set(&existing, RpathKind::Runpath)).unwrap();
    assert_eq!(m, Method::Unchanged);
    let m = elf_edit::edit_file(
        &exe,
        Some(&short),
        &set(&format!("{existing}/"), RpathKind::Runpath),
    )
    .unwrap();
    assert!(matches!(m, Method::Appended { .. }), "{m:?}");
    // ls has no rpath at all: a new entry goes into a spare DT_NULL slot.
    let ls = copy_in(Path::new("/usr/bin/ls"), d.path(), "ls");
    let out = edit_and_compare(&ls, d.path(), &set(LONG, RpathKind::Runpath));
    assert_eq!(
        run_stdout(Command::new(&out).arg("--version")),
        run_stdout(Command::new(&ls).arg("--version"))
    );
    let out = edit_and_compare(&ls, d.path(), &set("$ORIGIN", RpathKind::Rpath));
    assert_eq!(
        run_stdout(Command::new(&out).arg("--version")),
        run_stdout(Command::new(&ls).arg("--version"))
    );
}

/// A library `libg.so` in `dir/lib` and executables linked against it with
/// the given linker and rpath flags.
struct Built {
    dir: tempfile::TempDir,
}

impl Built {
    fn new() -> Built {
        let dir = tempdir();
        let p = dir.path();
        std::fs::write(p.join("g.c"), "int g(void) { return 42; }\n").unwrap();
        std::fs::write(
            p.join("m.c"),
            "#include <stdio.h>\nint g(void);\nint main(void) { printf(\"g=%d\\n\", g()); return 0; }\n",
        )
        .unwrap();
        Built { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Compiles and links with `cc`: "gcc" (GNU ld) or "clang" (the build root's LLVM's).
    fn build(&self, name: &str, cc: &str, flags: &[&str], lib: bool) -> PathBuf {
        let out = self.path().join(name);
        let mut cmd = match cc {
            "gcc" => Command::new("gcc"),
            "clang" => Command::new(llvm("clang")),
            _ => panic!("unknown compiler {cc}"),
        };
        if lib {
            cmd.args(["-shared", "-fPIC", "-Wl,-soname,libg.so"])
                .arg(self.path().join("g.c"));
        } else {
            cmd.arg(self.path().join("m.c"))
                .arg(self.path().join("libg.so"));
        }
        run(cmd.args(flags).arg("-o").arg(&out));
        out
    }
}

fn run_exe(exe: &Path) -> std::process::Output {
    output(Command::new(exe).env_remove("LD_LIBRARY_PATH"))
}

#[test]
fn own_executables_find_their_library_through_the_new_rpath() {
    let b = Built::new();
    b.build("libg.so", "gcc", &[], true);
    let cases: &[(&str, &str, &[&str])] = &[
        ("gcc-none", "gcc", &[]),
        (
            "gcc-runpath",
            "gcc",
            &["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/wrong"],
        ),
        (
            "gcc-rpath",
            "gcc",
            &[
                "-Wl,--disable-new-dtags",
                "-Wl,-rpath,$ORIGIN/wrong/but/longer/than/needed",
            ],
        ),
        ("gcc-nopie", "gcc", &["-no-pie", "-Wl,-rpath,$ORIGIN/x"]),
        // lld leaves no spare dynamic slots: adding an entry moves .dynamic.
        ("lld-none", "clang", &["-fuse-ld=lld"]),
        ("lld-nopie", "clang", &["-fuse-ld=lld", "-no-pie"]),
        (
            "lld-rpath",
            "clang",
            &[
                "-fuse-ld=lld",
                "-Wl,--disable-new-dtags",
                "-Wl,-rpath,/nowhere",
            ],
        ),
    ];
    // The library sits where only the new rpath leads.
    for dir in ["l", "libraries-in-a-directory-with-a-long-name"] {
        std::fs::create_dir_all(b.path().join(dir)).unwrap();
        std::fs::copy(b.path().join("libg.so"), b.path().join(dir).join("libg.so")).unwrap();
    }
    let out_dir = b.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for (name, cc, flags) in cases {
        let exe = b.build(name, cc, flags, false);
        assert!(
            !run_exe(&exe).status.success(),
            "{name} runs before the edit"
        );
        for (dir, kind) in [
            ("l", RpathKind::Runpath),
            (
                "libraries-in-a-directory-with-a-long-name",
                RpathKind::Runpath,
            ),
            ("l", RpathKind::Rpath),
            (
                "libraries-in-a-directory-with-a-long-name",
                RpathKind::Rpath,
            ),
        ] {
            let edit = set(&format!("$ORIGIN/../{dir}"), kind);
            let ours = edit_and_compare(&exe, &out_dir, &edit);
            for exe in [ours.clone(), stripped_path(&ours)] {
                let r = run_exe(&exe);
                assert_eq!(
                    String::from_utf8_lossy(&r.stdout),
                    "g=42\n",
                    "{} with {edit:?}: {}",
                    exe.display(),
                    String::from_utf8_lossy(&r.stderr)
                );
            }
        }
        // Removing the rpath makes the library unreachable again.
        if elf_edit::read_rpath(&exe).unwrap().is_empty() {
            continue;
        }
        let ours = edit_and_compare(&exe, &out_dir, &Edit::Remove);
        assert!(!run_exe(&ours).status.success());
    }
}

#[test]
fn own_libraries_with_rpath_and_runpath_match_patchelf() {
    let b = Built::new();
    let d = b.path().join("out");
    std::fs::create_dir(&d).unwrap();
    let libs = [
        b.build("plain.so", "gcc", &[], true),
        b.build(
            "runpath.so",
            "gcc",
            &[
                "-Wl,--enable-new-dtags",
                "-Wl,-rpath,$ORIGIN/../lib64:$ORIGIN",
            ],
            true,
        ),
        b.build(
            "rpath.so",
            "gcc",
            &[
                "-Wl,--disable-new-dtags",
                "-Wl,-rpath,$ORIGIN/../lib64:$ORIGIN",
            ],
            true,
        ),
        b.build("lld.so", "clang", &["-fuse-ld=lld"], true),
    ];
    for lib in &libs {
        for edit in [
            set("$ORIGIN", RpathKind::Runpath),
            set("$ORIGIN", RpathKind::Rpath),
            set(LONG, RpathKind::Runpath),
            set(LONG, RpathKind::Rpath),
            set("", RpathKind::Runpath),
            Edit::Remove,
        ] {
            let out = edit_and_compare(lib, &d, &edit);
            let expr = "l.g()";
            assert_eq!(
                ctypes_eval(&out, expr).trim(),
                "42",
                "{} {edit:?}",
                lib.display()
            );
        }
    }
    // A shorter value reuses the old bytes: the file keeps its size.
    let out = d.join("short.so");
    let m = elf_edit::edit_file(&libs[1], Some(&out), &set("$ORIGIN", RpathKind::Runpath)).unwrap();
    assert_eq!(m, Method::InPlace);
    assert_eq!(
        std::fs::metadata(&out).unwrap().len(),
        std::fs::metadata(&libs[1]).unwrap().len()
    );
}

/// numpy's extension module from the PyPI wheel, pip-downloaded once into
/// the test cache. Its RPATH leads to the bundled OpenBLAS in numpy.libs;
/// we move that directory and point the rpath at the new place (shorter and
/// longer), so `import numpy` only works if the loader honours our edit.
#[test]
fn numpy_wheel_extension_follows_the_new_rpath() {
    let cache = test_cache("numpy-2.1.3-cp312");
    let wheel = "numpy-2.1.3-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
    if !cache.join(wheel).exists() {
        run(Command::new(venv_bin("pip"))
            .args([
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.12",
            ])
            .args(["--platform", "manylinux_2_17_x86_64", "numpy==2.1.3", "-d"])
            .arg(&cache));
    }
    let d = tempdir();
    let site = d.path().join("site");
    run(Command::new(python("3.12"))
        .args(["-m", "zipfile", "-e"])
        .arg(cache.join(wheel))
        .arg(&site));
    let core = site.join("numpy/_core");
    let ext = std::fs::read_dir(&core)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("_multiarray_umath.cpython")
        })
        .expect("_multiarray_umath in the wheel");
    let old = elf_edit::read_rpath(&ext).unwrap();
    assert_eq!(old[0].value, b"$ORIGIN/../../numpy.libs");
    let import = |site: &Path| {
        Command::new(python("3.12"))
            .args([
                "-c",
                "import numpy; print(numpy.arange(10).sum(), numpy.ones((3,3)) @ numpy.ones(3))",
            ])
            .env("PYTHONPATH", site)
            .env("PYTHONNOUSERSITE", "1")
            .current_dir(site.parent().unwrap())
            .output()
            .unwrap()
    };
    assert!(
        import(&site).status.success(),
        "{}",
        String::from_utf8_lossy(&import(&site).stderr)
    );
    let orig = d.path().join("orig.so");
    std::fs::copy(&ext, &orig).unwrap();
    let mut libs_dir = site.join("numpy.libs");
    for (dir, kind) in [
        ("nl", RpathKind::Runpath),
        ("numpy.libs.moved.to.a.longer.place", RpathKind::Rpath),
    ] {
        let to = site.join(dir);
        std::fs::rename(&libs_dir, &to).unwrap();
        libs_dir = to;
        assert!(
            !import(&site).status.success(),
            "numpy imports with a stale rpath"
        );
        let out = edit_and_compare(&orig, d.path(), &set(&format!("$ORIGIN/../../{dir}"), kind));
        std::fs::copy(&out, &ext).unwrap();
        let r = import(&site);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "45 [3. 3. 3.]");
    }
}

/// GNU ld merges string tails in .dynstr: with rpath `/opt/libs/g`, the
/// name of the exported function `g` is the last byte of the rpath string.
/// Overwriting the rpath in place would rename the symbol (patchelf 0.17
/// does, and `g` becomes undefined), so the editor must append instead.
#[test]
fn tail_merged_symbol_name_survives_a_shorter_rpath() {
    let b = Built::new();
    let lib = b.build(
        "tm.so",
        "gcc",
        &["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/libs/g"],
        true,
    );
    let syms = run_stdout(Command::new("readelf").arg("-p").arg(".dynstr").arg(&lib));
    let standalone = syms
        .lines()
        .any(|l| l.rsplit(']').next().map(str::trim) == Some("g"));
    assert!(syms.contains("/opt/libs/g"), "{syms}");
    assert!(
        !standalone,
        "the linker did not merge `g` into the rpath: {syms}"
    );
    let out = b.path().join("out.so");
    let m = elf_edit::edit_file(&lib, Some(&out), &set("$ORIGIN", RpathKind::Runpath)).unwrap();
    assert!(matches!(m, Method::Appended { .. }), "{m:?}");
    assert_eq!(ctypes_eval(&out, "l.g()").trim(), "42");
    assert_eq!(elf_edit::read_rpath(&out).unwrap()[0].value, b"$ORIGIN");
    // Without the merge, the same edit is done in place.
    let plain = b.build(
        "plain.so",
        "gcc",
        &["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/libs/x"],
        true,
    );
    let m = elf_edit::edit_file(&plain, Some(&out), &set("$ORIGIN", RpathKind::Runpath)).unwrap();
    assert_eq!(m, Method::InPlace);
    assert_eq!(ctypes_eval(&out, "l.g()").trim(), "42");
}

/// Without section headers nothing tells which bytes after the program
/// header table may move, so the table itself moves to the new segment
/// (PT_PHDR follows it). The kernel and ld.so must still find it.
#[test]
fn files_without_section_headers_move_the_program_header_table() {
    let b = Built::new();
    b.build("libg.so", "gcc", &[], true);
    std::fs::create_dir(b.path().join("lib-dir-with-a-longer-name")).unwrap();
    std::fs::copy(
        b.path().join("libg.so"),
        b.path().join("lib-dir-with-a-longer-name/libg.so"),
    )
    .unwrap();
    let exes = [
        copy_in(Path::new("/usr/bin/ls"), b.path(), "ls"),
        b.build("pie", "gcc", &[], false),
        b.build("nopie-lld", "clang", &["-fuse-ld=lld", "-no-pie"], false),
        b.build("nopie-gnu", "gcc", &["-no-pie", "-Wl,-rpath,/x"], false),
    ];
    for exe in &exes {
        run(Command::new(llvm("llvm-objcopy"))
            .arg("--strip-sections")
            .arg(exe));
        let out = exe.with_extension("edited");
        let edit = set("$ORIGIN/lib-dir-with-a-longer-name", RpathKind::Runpath);
        let m = elf_edit::edit_file(exe, Some(&out), &edit).unwrap();
        assert!(
            matches!(
                m,
                Method::Appended {
                    moved_phdrs: true,
                    ..
                }
            ),
            "{m:?}"
        );
        check_layout(&out);
        assert!(dyn_semantics(&out).contains(
            &"(RUNPATH) Library runpath: [$ORIGIN/lib-dir-with-a-longer-name]".to_string()
        ));
        let r = run_exe(&out);
        if exe.ends_with("ls") {
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        } else {
            assert_eq!(
                String::from_utf8_lossy(&r.stdout),
                "g=42\n",
                "{}: {}",
                exe.display(),
                String::from_utf8_lossy(&r.stderr)
            );
        }
    }
    let lib = copy_in(&Path::new(SYSLIB).join("libz.so.1"), b.path(), "libz.so.1");
    run(Command::new(llvm("llvm-objcopy"))
        .arg("--strip-sections")
        .arg(&lib));
    let out = b.path().join("libz-edited.so");
    elf_edit::edit_file(&lib, Some(&out), &set(LONG, RpathKind::Runpath)).unwrap();
    check_layout(&out);
    let expr = "(setattr(l.zlibVersion, 'restype', ctypes.c_char_p), l.zlibVersion())[1]";
    assert_eq!(ctypes_eval(&out, expr), ctypes_eval(&lib, expr));
}

/// A PT_NULL program header is given up for the new PT_LOAD: the table
/// keeps its place and size. (PT_NOTE is turned into PT_NULL to get one:
/// the loader ignores both.)
#[test]
fn a_pt_null_entry_is_reused() {
    let d = tempdir();
    let lib = d.path().join("libz.so.1");
    let mut bytes = std::fs::read(Path::new(SYSLIB).join("libz.so.1")).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let phoff = elf.header.e_phoff as usize;
    let note = elf
        .program_headers
        .iter()
        .position(|p| p.p_type == goblin::elf::program_header::PT_NOTE)
        .unwrap();
    let phnum = elf.header.e_phnum;
    bytes[phoff + note * 56..phoff + note * 56 + 4].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(&lib, &bytes).unwrap();
    let out = d.path().join("out.so");
    let m = elf_edit::edit_file(&lib, Some(&out), &set(LONG, RpathKind::Runpath)).unwrap();
    assert_eq!(
        m,
        Method::Appended {
            moved_dynamic: false,
            moved_phdrs: false
        }
    );
    let edited = std::fs::read(&out).unwrap();
    let elf = goblin::elf::Elf::parse(&edited).unwrap();
    assert_eq!(
        (elf.header.e_phoff as usize, elf.header.e_phnum),
        (phoff, phnum)
    );
    check_layout(&out);
    let expr = "(setattr(l.zlibVersion, 'restype', ctypes.c_char_p), l.zlibVersion())[1]";
    assert_eq!(ctypes_eval(&out, expr), ctypes_eval(&lib, expr));
}

/// The default in-place edit replaces the file atomically with the same
/// permission bits and, through a symlink, edits the target, not the link.
#[test]
fn in_place_edit_keeps_mode_and_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempdir();
    let lib = copy_in(&fixture("tiny-runpath.so"), d.path(), "libtiny.so.1");
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o750)).unwrap();
    let link = d.path().join("libtiny.so");
    std::os::unix::fs::symlink("libtiny.so.1", &link).unwrap();
    elf_edit::edit_file(&link, None, &set(LONG, RpathKind::Runpath)).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::metadata(&lib).unwrap().permissions().mode() & 0o7777,
        0o750
    );
    assert_eq!(
        elf_edit::read_rpath(&lib).unwrap()[0].value,
        LONG.as_bytes()
    );
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "temporary files left: {names:?}");
    check_layout(&lib);
    check_sorted_sections(&lib);
}

/// Free bytes after the program header table (here left by a linker
/// script) take the new entry: no section but .dynstr moves.
#[test]
fn a_gap_after_the_program_headers_is_used() {
    let b = Built::new();
    let script = run_stdout(Command::new("ld").args(["--verbose", "-shared"]));
    let script: Vec<&str> = script
        .split("==================================================")
        .collect();
    let script = script[1].replace(
        "SEGMENT_START(\"text-segment\", 0) + SIZEOF_HEADERS;",
        "SEGMENT_START(\"text-segment\", 0) + SIZEOF_HEADERS + 0x80;",
    );
    assert!(
        script.contains("SIZEOF_HEADERS + 0x80"),
        "ld's default script changed"
    );
    std::fs::write(b.path().join("gap.ld"), script).unwrap();
    let lib = b.build(
        "gap.so",
        "gcc",
        &[&format!("-Wl,-T,{}", b.path().join("gap.ld").display())],
        true,
    );
    let out = edit_and_compare(&lib, b.path(), &set(LONG, RpathKind::Runpath));
    assert_eq!(ctypes_eval(&out, "l.g()").trim(), "42");
    let (before, after) = (std::fs::read(&lib).unwrap(), std::fs::read(&out).unwrap());
    let (before, after) = (
        goblin::elf::Elf::parse(&before).unwrap(),
        goblin::elf::Elf::parse(&after).unwrap(),
    );
    assert_eq!(before.header.e_phoff, after.header.e_phoff);
    let addrs = |e: &goblin::elf::Elf| -> Vec<(String, u64)> {
        let mut v: Vec<_> = e
            .section_headers
            .iter()
            .map(|s| {
                (
                    e.shdr_strtab.get_at(s.sh_name).unwrap().to_string(),
                    s.sh_addr,
                )
            })
            .filter(|(n, _)| n != ".dynstr")
            .collect();
        v.sort();
        v
    };
    assert_eq!(addrs(&before), addrs(&after));
}

/// A large .bss takes address space, not file space: the new segment goes
/// at the end of the file (offset ≡ address modulo the alignment), so the
/// file grows by about a page plus the new strings, not by the .bss.
#[test]
fn a_large_bss_does_not_grow_the_file() {
    let b = Built::new();
    let p = b.path();
    std::fs::write(
        p.join("g.c"),
        "char gbig[32 << 20];\nint g(void) { gbig[sizeof gbig - 1] = 1; return 41 + gbig[sizeof gbig - 1]; }\n",
    )
    .unwrap();
    std::fs::write(
        p.join("m.c"),
        "#include <stdio.h>\nchar mbig[32 << 20];\nint g(void);\n\
         int main(void) { mbig[sizeof mbig - 1] = 1; printf(\"g=%d\\n\", g() * mbig[sizeof mbig - 1]); return 0; }\n",
    )
    .unwrap();
    let out_dir = p.join("out");
    std::fs::create_dir_all(p.join("l")).unwrap();
    std::fs::create_dir(&out_dir).unwrap();
    for (cc, flags) in [("gcc", &[][..]), ("clang", &["-fuse-ld=lld"][..])] {
        let lib = b.build("libg.so", cc, flags, true);
        let exe = b.build(&format!("m-{cc}"), cc, flags, false);
        for input in [&lib, &exe] {
            let size = |f: &Path| std::fs::metadata(f).unwrap().len();
            assert!(
                size(input) < 1 << 20,
                "{}: .bss stored in the file",
                input.display()
            );
            let edit = set(&format!("$ORIGIN/../l:{LONG}"), RpathKind::Runpath);
            let ours = edit_and_compare(input, &out_dir, &edit);
            let elf_bytes = std::fs::read(input).unwrap();
            let elf = goblin::elf::Elf::parse(&elf_bytes).unwrap();
            let dynstr = elf
                .section_headers
                .iter()
                .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".dynstr"))
                .unwrap()
                .sh_size;
            // The new segment: the old .dynstr plus the rpath, maybe the
            // dynamic array and the sections moved for one more program
            // header; then page padding and the section header table.
            let grown = size(&ours) - size(input);
            assert!(
                grown <= dynstr + 4 * 4096,
                "{} grew by {grown} bytes (.dynstr {dynstr})",
                input.display()
            );
        }
        // The edited executable finds the edited library in l/ and runs.
        std::fs::copy(out_dir.join("ours-libg.so"), p.join("l/libg.so")).unwrap();
        let r = run_exe(&out_dir.join(format!("ours-m-{cc}")));
        assert_eq!(
            String::from_utf8_lossy(&r.stdout),
            "g=42\n",
            "{cc}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
}

/// Editing in place keeps the file: its inode, hard links, owner, mode
/// (set-user-ID included) and extended attributes (file capabilities).
fn set_xattr(p: &Path, name: &str, value: &[u8]) -> bool {
    let p = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a live buffer.
    unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        ) == 0
    }
}

fn get_xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let p = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = vec![0u8; 256];
    // SAFETY: as above.
    let r = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (r >= 0).then(|| {
        buf.truncate(r as usize);
        buf
    })
}

#[test]
fn in_place_edit_keeps_owner_mode_xattrs_and_hard_links() {
    let d = tempdir();
    let dir = d.path();
    let so = copy_in(&fixture("tiny-none.so"), dir, "libx.so");
    std::fs::hard_link(&so, dir.join("libx-link.so")).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&so, Some(1234), Some(2345)).unwrap();
    }
    std::fs::set_permissions(&so, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let user = set_xattr(&so, "user.rocm_wheel_test", b"kept");
    // cap_net_bind_service in the permitted set (VFS_CAP_REVISION_2).
    let mut cap = Vec::new();
    for w in [0x0200_0000u32, 1 << 10, 0, 0, 0] {
        cap.extend_from_slice(&w.to_le_bytes());
    }
    let caps = root && set_xattr(&so, "security.capability", &cap);
    let ino = std::fs::metadata(&so).unwrap().ino();

    elf_edit::edit_file(&so, None, &set("$ORIGIN/../lib", RpathKind::Runpath)).unwrap();

    let md = std::fs::metadata(&so).unwrap();
    assert_eq!(md.ino(), ino, "the file was replaced, not edited in place");
    assert_eq!(md.nlink(), 2, "the hard link was broken");
    assert_eq!(md.mode() & 0o7777, 0o4755);
    if root {
        assert_eq!((md.uid(), md.gid()), (1234, 2345), "owner changed");
    }
    if user {
        assert_eq!(
            get_xattr(&so, "user.rocm_wheel_test").as_deref(),
            Some(&b"kept"[..])
        );
    }
    if caps {
        assert_eq!(get_xattr(&so, "security.capability"), Some(cap));
    }
    let got = elf_edit::read_rpath(&dir.join("libx-link.so")).unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].kind, got[0].value.as_slice()),
        (RpathKind::Runpath, &b"$ORIGIN/../lib"[..])
    );
}
