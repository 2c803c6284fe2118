//! `--help` of every subcommand exits 0 and documents the flags the Bazel
//! rules pass (rules/private/rules/wheel.bzl, rules/private/actions/hip_compile.bzl).

use crate::*;

/// The flags (`--name`) a help text documents.
fn flags(help: &str) -> Vec<String> {
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '=')
        .filter(|t| t.starts_with("--") && t.len() > 2)
        .map(str::to_string)
        .collect()
}

/// Long because it is one table of every subcommand and its flags.
#[test]
fn every_subcommand_has_help() {
    let d = tempdir();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[],
            &["build", "rpath", "check", "bundle", "inspect", "repair"],
        ),
        (
            &["build"],
            &["--manifest", "--output", "--compression-level", "--jobs"],
        ),
        (&["rpath"], &["show", "set", "remove"]),
        (&["rpath", "show"], &["<FILE>"]),
        (&["rpath", "set"], &["--rpath", "--kind", "--output"]),
        (&["rpath", "remove"], &["--output"]),
        (
            &["check"],
            &[
                "--policy",
                "--allow-external",
                "--no-default-allow",
                "--allow-rpath-prefix",
                "--json",
            ],
        ),
        (&["bundle"], &["write", "list", "extract"]),
        (
            &["bundle", "write"],
            &[
                "--output",
                "--compress",
                "--host-triple",
                "--entry",
                "--format-version",
                "--level",
            ],
        ),
        (&["bundle", "list"], &["--json", "<FILE>"]),
        (
            &["bundle", "extract"],
            &["--target", "--output", "--bundle"],
        ),
        (&["inspect"], &["--json", "<PATH>"]),
        (&["repair"], &["--output", "--plat", "--json", "<INPUT>"]),
        (&["index"], &["--output", "<DIR_OR_WHEEL>..."]),
        (
            &["device-extras"],
            &["--output", "--device-wheel", "<INPUT>"],
        ),
        (
            &["variant"],
            &["--output", "--label", "--device-wheel", "<INPUT>"],
        ),
    ];
    for (cmd, want) in cases {
        let mut argv: Vec<&str> = cmd.to_vec();
        argv.push("--help");
        let out = rw(d.path(), &argv).success();
        let documented = flags(&out.stdout);
        for w in *want {
            let ok = if w.starts_with("--") {
                documented.iter().any(|f| f == w)
            } else {
                out.stdout.split_whitespace().any(|t| t == *w)
            };
            assert!(
                ok,
                "`rocm-wheel {}` does not document {w}:\n{}",
                argv.join(" "),
                out.stdout
            );
        }
        // `help <sub>` is the same text.
        if !cmd.is_empty() {
            let mut alt = vec!["help"];
            alt.extend_from_slice(cmd);
            if cmd.len() == 1 {
                assert_eq!(rw(d.path(), &alt).success().stdout, out.stdout);
            }
        }
    }
    // No arguments at all: usage on stderr, exit 2.
    rw(d.path(), &[] as &[&str]).fails(2, "Usage: rocm-wheel <COMMAND>");
    let v = rw(d.path(), &["--version"]).success().stdout;
    assert_eq!(v.trim(), concat!("rocm-wheel ", env!("CARGO_PKG_VERSION")));
}
