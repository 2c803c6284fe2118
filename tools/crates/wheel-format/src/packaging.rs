//! Our PEP 440 normaliser, version equality and PEP 508 parser against
//! `packaging` from the repository venv, the reference implementation pip
//! uses.

use std::process::Command;
use test_support::{run_stdout, venv_bin};

/// Versions for [`versions_and_requirements_agree_with_packaging`]: valid
/// ones in unusual spellings, and invalid ones.
const VERSIONS: &[&str] = &[
    "0.7.1",
    "v1.0",
    "1.0-1",
    "1.0.alpha.2",
    "1.0c1",
    "1.0-preview-3",
    "01.002",
    "0!1.0",
    "2!1.0",
    "1.0.dev",
    "1.0rev",
    "1.0a1.post2.dev3+Ubuntu-01_x",
    "1.0+abc.5",
    " 1.0 ",
    "1.0post-",
    "1.0.post",
    "1.0-r4",
    "1.0_a_1",
    "1.0.RC.1",
    "1!",
    "",
    "1.",
    "a1",
    "1.0+",
    "1.0+a..b",
    "1.0.x",
    "1.0 2",
    "1.0-",
    "1..0",
    "1.0+ab_",
    "1.0a",
    "1.0b2-3",
    "1.0.0.0.0.0.1",
    "1.0dev-5",
    "1.0+-a",
];

/// Versions with zeros to pad or drop, compared in pairs with each other
/// and the valid [`VERSIONS`] by [`equality_agrees_with_packaging`].
const PADDED: &[&str] = &[
    "1",
    "1.0.0",
    "1.0.0.post1",
    "1.0.0+abc.5",
    "1.0.0+abc.05",
    "1!1",
    "2!1",
    "0.7.1.0",
    "0.7.10",
    "1.0.0rc1",
    "1.0.0a2",
    "1.0a0",
    "1.0.0.dev0",
    "0",
    "0.0",
    "10.0",
];

/// Invalid requirements for [`versions_and_requirements_agree_with_packaging`]; the
/// valid ones are the parser's unit tests' (`pep508::tests::VALID`).
const INVALID_REQUIREMENTS: &[&str] = &[
    "",
    "-foo",
    "foo>=",
    "foo=1",
    "foo[bar",
    "foo; python_versionn > '3'",
    "foo; python_version",
    "foo; python_version > '3",
    "foo >=1 bar",
    "foo~=1",
    "foo>=1.*",
    "foo (>=1",
    "foo==1.0+local.*",
    "foo; os_name=='a'or os_name=='b'",
];

/// Our PEP 440 normaliser and PEP 508 parser against `packaging`, the
/// reference implementation pip uses.
#[test]
fn versions_and_requirements_agree_with_packaging() {
    let versions = VERSIONS;
    // packaging refuses the variant markers, as the plain parser does.
    let reqs: Vec<&str> = crate::pep508::tests::VALID
        .iter()
        .chain(INVALID_REQUIREMENTS)
        .chain(crate::pep508::tests::VARIANT)
        .copied()
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let mut input = String::new();
    for v in versions {
        input.push_str(&format!("V\t{v}\n"));
    }
    for r in &reqs {
        input.push_str(&format!("R\t{r}\n"));
    }
    std::fs::write(tmp.path().join("in.txt"), &input).unwrap();
    let py = r#"
import sys
from packaging.version import Version
from packaging.requirements import Requirement
for line in open(sys.argv[1]):
    kind, text = line.rstrip("\n").split("\t", 1)
    try:
        out = str(Version(text)) if kind == "V" else (Requirement(text) and "ok")
    except Exception:
        out = "ERR"
    print(out)
"#;
    let out = run_stdout(
        Command::new(venv_bin("python"))
            .args(["-c", py])
            .arg(tmp.path().join("in.txt")),
    );
    let theirs: Vec<&str> = out.lines().collect();
    let mut disagree = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let ours = crate::normalize_version(v).unwrap_or_else(|_| "ERR".into());
        if ours != theirs[i] {
            disagree.push(format!(
                "version {v:?}: ours {ours:?}, packaging {:?}",
                theirs[i]
            ));
        }
    }
    for (i, r) in reqs.iter().enumerate() {
        let ours = if crate::parse_requirement(r).is_ok() {
            "ok"
        } else {
            "ERR"
        };
        let t = theirs[versions.len() + i];
        if ours != t {
            disagree.push(format!("requirement {r:?}: ours {ours}, packaging {t}"));
        }
    }
    assert!(
        disagree.is_empty(),
        "disagreements with packaging:\n{}",
        disagree.join("\n")
    );
}

/// `same_version` against packaging's `Version ==` on every pair of valid
/// [`VERSIONS`] and [`PADDED`].
#[test]
fn equality_agrees_with_packaging() {
    let valid: Vec<&str> = (VERSIONS.iter().chain(PADDED))
        .copied()
        .filter(|v| crate::normalize_version(v).is_ok())
        .collect();
    let pairs: Vec<(&str, &str)> = (valid.iter())
        .flat_map(|a| valid.iter().map(move |b| (*a, *b)))
        .collect();
    let py = "import json, sys\nfrom packaging.version import Version\n\
              json.dump([Version(a) == Version(b) for a, b in json.load(sys.stdin)], sys.stdout)";
    let out = test_support::venv_python::<&str>(py, &[], &serde_json::to_vec(&pairs).unwrap());
    let theirs: Vec<bool> = serde_json::from_slice(&out).unwrap();
    assert_eq!(theirs.len(), pairs.len());
    let disagree: Vec<String> = (pairs.iter().zip(&theirs))
        .filter(|((a, b), t)| crate::same_version(a, b) != **t)
        .map(|((a, b), t)| format!("{a:?} == {b:?}: packaging says {t}"))
        .collect();
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    // Both verdicts occur, or the pairs tested little.
    assert!(theirs.iter().filter(|t| **t).count() > valid.len());
}
