//! `rocm-wheel rpath show|set|remove`, checked against `readelf -d`.

use crate::*;
use std::path::Path;
use std::process::Command;

/// The RUNPATH / RPATH lines of `readelf -d`, as `KIND value`.
fn readelf_paths(file: &Path) -> Vec<String> {
    let out = run_stdout(Command::new("readelf").arg("-d").arg(file));
    out.lines()
        .filter_map(|l| {
            let kind = if l.contains("(RUNPATH)") {
                "RUNPATH"
            } else if l.contains("(RPATH)") {
                "RPATH"
            } else {
                return None;
            };
            let v = l.split_once('[')?.1.strip_suffix(']')?;
            Some(format!("{kind} {v}"))
        })
        .collect()
}

fn show(dir: &Path, file: &str) -> Vec<String> {
    let out = rw(dir, &["rpath", "show", file]).success();
    out.stdout.lines().map(str::to_string).collect()
}

#[test]
fn set_show_remove_round_trip() {
    let d = tempdir();
    let dir = d.path();
    host_so(dir, "libdemo.so");
    assert_eq!(show(dir, "libdemo.so"), ["(no RUNPATH or RPATH)"]);
    assert!(readelf_paths(&dir.join("libdemo.so")).is_empty());
    let original = std::fs::read(dir.join("libdemo.so")).unwrap();

    // --output: a new file, the input stays as it was.
    let long = "$ORIGIN/../rocm/lib:$ORIGIN/../lib:$ORIGIN";
    let out = rw(
        dir,
        &[
            "rpath",
            "set",
            "libdemo.so",
            "--rpath",
            long,
            "-o",
            "libset.so",
        ],
    )
    .success();
    assert!(out.stderr.starts_with("rpath: "), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("libdemo.so")).unwrap(), original);
    let want = [format!("RUNPATH {long}")];
    assert_eq!(show(dir, "libset.so"), want);
    assert_eq!(readelf_paths(&dir.join("libset.so")), want);

    // In place, as DT_RPATH: the existing entry is converted.
    rw(
        dir,
        &[
            "rpath",
            "set",
            "libset.so",
            "--rpath",
            "$ORIGIN",
            "--kind",
            "rpath",
        ],
    )
    .success();
    let want = ["RPATH $ORIGIN".to_string()];
    assert_eq!(show(dir, "libset.so"), want);
    assert_eq!(readelf_paths(&dir.join("libset.so")), want);

    // Setting the value the file already has changes nothing.
    let before = std::fs::read(dir.join("libset.so")).unwrap();
    let out = rw(
        dir,
        &[
            "rpath",
            "set",
            "libset.so",
            "--rpath",
            "$ORIGIN",
            "--kind",
            "rpath",
        ],
    )
    .success();
    assert_eq!(out.stderr.trim(), "rpath: unchanged");
    assert_eq!(std::fs::read(dir.join("libset.so")).unwrap(), before);

    rw(
        dir,
        &["rpath", "remove", "libset.so", "--output", "librm.so"],
    )
    .success();
    assert_eq!(show(dir, "librm.so"), ["(no RUNPATH or RPATH)"]);
    assert!(readelf_paths(&dir.join("librm.so")).is_empty());
    assert_eq!(show(dir, "libset.so"), ["RPATH $ORIGIN"]);

    std::fs::rename(dir.join("librm.so"), dir.join("libfinal.so")).unwrap();
    assert_links_and_loads(dir, "final");
}

/// The edited library `lib{name}.so` still links and loads: gcc's linker
/// reads it, and a program linked to it runs.
fn assert_links_and_loads(dir: &Path, name: &str) {
    let prog = dir.join("main.c");
    std::fs::write(
        &prog,
        "int answer(void);\nint main(void) { return answer() == 42 ? 0 : 1; }\n",
    )
    .unwrap();
    run_stdout(Command::new("gcc").current_dir(dir).args([
        "main.c",
        "-L.",
        &format!("-l{name}"),
        "-Wl,-rpath,$ORIGIN",
        "-o",
        "main",
    ]));
    let st = Command::new(dir.join("main")).status().unwrap();
    assert!(st.success(), "program linked to the edited library failed");
}

/// `set` refuses control characters; `show` prints one line per entry even
/// for files that already hold such bytes (escaped, like a backslash).
#[test]
fn control_characters_are_refused_and_shown_escaped() {
    let d = tempdir();
    let dir = d.path();
    host_so(dir, "libdemo.so");
    let before = snapshot(dir);
    for (rpath, what) in [
        ("$ORIGIN\n/evil", "a newline at byte 7"),
        ("$ORIGIN:\t/x", "a tab at byte 8"),
        ("/a\x1b[31m", "the control character 0x1b at byte 2"),
    ] {
        for argv in [
            &["rpath", "set", "libdemo.so", "--rpath", rpath][..],
            &["rpath", "set", "libdemo.so", "--rpath", rpath, "-o", "o.so"][..],
        ] {
            let out = rw(dir, argv).fails(1, what);
            assert!(out.stderr.contains("--rpath"), "{}", out.stderr);
            assert_unchanged(dir, &before);
        }
    }
    // A file that already holds such bytes (written over a placeholder).
    let placeholder = "/opt/a|b:/c\\d:/e~f:/g^h";
    rw(dir, &["rpath", "set", "libdemo.so", "--rpath", placeholder]).success();
    let mut so = std::fs::read(dir.join("libdemo.so")).unwrap();
    let at = so
        .windows(6)
        .position(|w| w == b"/opt/a")
        .expect("the rpath string");
    for b in &mut so[at..at + placeholder.len()] {
        *b = match *b {
            b'|' => b'\n',
            b'~' => 0x1b,
            b'^' => 0xff,
            b => b,
        };
    }
    std::fs::write(dir.join("libdemo.so"), so).unwrap();
    assert_eq!(
        show(dir, "libdemo.so"),
        ["RUNPATH /opt/a\\nb:/c\\\\d:/e\\x1bf:/g\\xffh"]
    );
}

#[test]
fn keeps_permissions_and_edits_through_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempdir();
    let dir = d.path();
    let so = host_so(dir, "libdemo.so");
    std::fs::set_permissions(&so, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink("libdemo.so", dir.join("link.so")).unwrap();
    rw(dir, &["rpath", "set", "link.so", "--rpath", "$ORIGIN/x"]).success();
    assert!(dir.join("link.so").is_symlink(), "the link was replaced");
    assert_eq!(show(dir, "libdemo.so"), ["RUNPATH $ORIGIN/x"]);
    let mode = std::fs::metadata(&so).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
}

/// Copies of a real shared library with one header byte changed.
fn crafted(dir: &Path, name: &str, offset: usize, byte: u8) {
    let mut data = std::fs::read(dir.join("libdemo.so")).unwrap();
    data[offset] = byte;
    std::fs::write(dir.join(name), data).unwrap();
}

#[test]
fn bad_inputs_fail_and_leave_files_alone() {
    let d = tempdir();
    let dir = d.path();
    let so = host_so(dir, "libdemo.so");
    let whole = std::fs::read(&so).unwrap();
    std::fs::write(dir.join("notes.txt"), "not an ELF file\n").unwrap();
    std::fs::write(dir.join("empty.so"), b"").unwrap();
    // Cut inside the program headers, and inside the section headers.
    std::fs::write(dir.join("trunc64.so"), &whole[..100]).unwrap();
    std::fs::write(dir.join("trunc.so"), &whole[..whole.len() - 100]).unwrap();
    crafted(dir, "elf32.so", 4, 1); // EI_CLASS = ELFCLASS32
    crafted(dir, "msb.so", 5, 2); // EI_DATA = ELFDATA2MSB
    crafted(dir, "badclass.so", 4, 7);
    copy_in(&code_object("gfx906"), dir, "gpu.co");
    // A static executable has no dynamic section.
    std::fs::write(dir.join("m.c"), "int main(void) { return 0; }\n").unwrap();
    let st = Command::new("gcc")
        .current_dir(dir)
        .args(["-static", "m.c", "-o", "static.exe"])
        .status()
        .expect("gcc (run `make setup` first)");
    assert!(
        st.success(),
        "gcc -static failed: libc6-dev is missing (run `make setup` first)"
    );
    std::fs::remove_file(dir.join("m.c")).unwrap();
    // An object file is not linked: it has no run-time search path.
    std::fs::write(dir.join("o.c"), "int f(void) { return 1; }\n").unwrap();
    run_stdout(
        Command::new("gcc")
            .current_dir(dir)
            .args(["-c", "o.c", "-o", "obj.o"]),
    );
    std::fs::remove_file(dir.join("o.c")).unwrap();

    let cases: &[(&str, &str)] = &[
        ("notes.txt", "not an ELF file (no \\x7fELF magic)"),
        ("empty.so", "not an ELF file"),
        ("missing.so", "missing.so"),
        (
            "trunc64.so",
            "truncated ELF file: the program header table extends past the end of the file",
        ),
        (
            "trunc.so",
            "truncated ELF file: the section header table extends past the end of the file",
        ),
        ("elf32.so", "32-bit ELF (ELFCLASS32) is not supported"),
        ("msb.so", "big-endian ELF (ELFDATA2MSB) is not supported"),
        ("badclass.so", "invalid ELF class 7"),
        ("gpu.co", "ELF machine 224 (AMDGPU) is not supported"),
        ("static.exe", "no dynamic section (PT_DYNAMIC)"),
        ("obj.o", "ELF type 1 (REL) has no run-time search path"),
    ];
    let before = snapshot(dir);
    for (file, needle) in cases {
        let err = format!("{file}: ");
        let out = rw(dir, &["rpath", "show", file]).fails(1, needle);
        assert!(out.stderr.contains(&err), "names the file: {}", out.stderr);
        for argv in [
            &["rpath", "set", file, "--rpath", "$ORIGIN"][..],
            &["rpath", "set", file, "--rpath", "$ORIGIN", "-o", "out.so"][..],
            &["rpath", "remove", file][..],
            &["rpath", "remove", file, "--output", "out.so"][..],
        ] {
            rw(dir, argv).fails(1, needle);
            assert_unchanged(dir, &before);
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    let d = tempdir();
    let dir = d.path();
    host_so(dir, "libdemo.so");
    let before = snapshot(dir);
    for (argv, needle) in [
        (&["rpath", "set", "libdemo.so"][..], "--rpath"),
        (
            &[
                "rpath",
                "set",
                "libdemo.so",
                "--rpath",
                "x",
                "--kind",
                "both",
            ][..],
            "invalid value 'both'",
        ),
        (&["rpath", "show"][..], "<FILE>"),
        (&["rpath", "frobnicate", "libdemo.so"][..], "frobnicate"),
    ] {
        rw(dir, argv).fails(2, needle);
        assert_unchanged(dir, &before);
    }
}

#[test]
fn unwritable_output_directory() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempdir();
    let dir = d.path();
    host_so(dir, "libdemo.so");
    std::fs::create_dir(dir.join("ro")).unwrap();
    std::fs::copy(dir.join("libdemo.so"), dir.join("ro/libin.so")).unwrap();
    let ro = dir.join("ro");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(dir);
    let results = [
        // --output into the read-only directory.
        run_without_dac_override(
            dir,
            &ro,
            &[
                "rpath",
                "set",
                "libdemo.so",
                "--rpath",
                "$ORIGIN",
                "-o",
                "ro/out.so",
            ],
        ),
        // (In place needs no directory write: the file itself is edited.)
        run_without_dac_override(
            dir,
            &ro,
            &["rpath", "remove", "ro/libin.so", "-o", "ro/x.so"],
        ),
    ];
    let after = snapshot(dir);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    for out in results {
        let out = out.fails(1, "cannot create a temporary file in ");
        assert!(
            out.stderr.contains("ro: Permission denied"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(after, before, "a failed edit changed files");
}
