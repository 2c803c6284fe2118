use super::*;
use crate::cmd::parse_args;

fn run_cli(argv: &[&str]) -> (i32, String, String) {
    let args = parse_args::<Args>("check", argv).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = execute(args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn unreadable_input_exits_2() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let junk = dir.join("junk-1.0-py3-none-any.whl");
    std::fs::write(&junk, b"not a zip").unwrap();
    let (code, out, err) = run_cli(&[junk.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("not a zip archive"), "{err}");

    let (code, _, err) = run_cli(&[dir.join("missing.whl").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot open"), "{err}");
}

#[test]
fn unknown_policy_exits_2() {
    let (code, _, err) = run_cli(&["x.whl", "--policy", "manylinux_9_9"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown policy"), "{err}");
}

#[test]
fn usage_errors_are_rejected_by_clap() {
    assert!(parse_args::<Args>("check", &[]).is_err());
    assert!(parse_args::<Args>("check", &["a.whl", "--bogus"]).is_err());
}
