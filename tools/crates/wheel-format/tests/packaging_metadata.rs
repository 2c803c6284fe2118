//! Differential test on real metadata: every `Version`, `Requires-Dist` and
//! `Requires-Python` of the distributions installed in the dev venv and in
//! the build root's system site-packages (Debian's packages, under `make
//! rust-test`), and of the PyPI wheels whose METADATA is committed in
//! `tests/data/pypi_metadata` (JAX's and the ROCm plugins', torch's,
//! rocm-bootstrap's and more: `fetch.py` there), plus a damaged copy of
//! each requirement (cut in half: mostly refused), judged by wheel-format,
//! by `packaging` (what pip and PyPI run) and, for requirements, by
//! `pep508_rs` (uv's parser).
//!
//! Versions must give the same verdict and the same normal form;
//! requirements and specifier sets the same verdict (wheel-format writes them
//! as given, so there is no normal form of ours to compare).

use std::collections::BTreeSet;
use std::str::FromStr;

use wheel_format::{normalize_version, parse_requirement, validate_specifiers};

/// Prints the corpus, `[[kind, text], ...]` (V version, R requirement, S
/// Requires-Python), from the interpreter's own distributions, the
/// site-packages directories and the METADATA files in argv[1:].
const HARVEST: &str = r#"
import email.parser, importlib.metadata as md, json, sys

def fields(msg):
    yield "V", msg.get("Version")
    for r in msg.get_all("Requires-Dist") or []:
        yield "R", r
    yield "S", msg.get("Requires-Python")

items = set()
dirs = [a for a in sys.argv[1:] if not a.endswith(".METADATA")]
for d in md.distributions(path=sys.path + dirs):
    items.update((k, v) for k, v in fields(d.metadata) if v is not None)
for f in (a for a in sys.argv[1:] if a.endswith(".METADATA")):
    with open(f, "rb") as m:
        items.update((k, v) for k, v in fields(email.parser.BytesParser().parse(m)) if v is not None)
json.dump(sorted(items), sys.stdout)
"#;

/// Reads `[[kind, text], ...]`, prints packaging's verdict on each: the
/// normal form (versions), "ok", or null (refused).
const JUDGE: &str = r#"
import json, sys
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

def judge(kind, text):
    try:
        if kind == "V":
            return str(Version(text))
        (Requirement if kind == "R" else SpecifierSet)(text)
        return "ok"
    except Exception:
        return None

json.dump([judge(k, t) for k, t in json.load(sys.stdin)], sys.stdout)
"#;

type Item = (String, String);

/// Distinct `Requires-Python` values the corpus must hold: 16 when this was
/// written (the committed PyPI METADATA gives 6 of them, the dev venv and
/// the build root's packages the rest, both pinned by setup).
const FLOOR_REQUIRES_PYTHON: usize = 14;

/// The committed METADATA files of PyPI wheels, sorted.
fn pypi_metadata() -> Vec<std::path::PathBuf> {
    let dir = test_support::manifest_dir().join("tests/data/pypi_metadata");
    let mut files: Vec<_> = (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "METADATA"))
        .collect();
    files.sort();
    files
}

fn harvest() -> Vec<Item> {
    // The build root's Debian-packaged distributions (importlib ignores the
    // directory where it does not exist).
    let mut args = vec!["/usr/lib/python3/dist-packages".to_string()];
    args.extend(pypi_metadata().iter().map(|p| p.display().to_string()));
    serde_json::from_slice(&test_support::venv_python(HARVEST, &args, b"")).unwrap()
}

/// The first half of `s` (on a character boundary, trailing space
/// dropped): a requirement cut there is mostly invalid, in every way a
/// parser can be cut short.
fn cut(s: &str) -> String {
    let mut n = s.len() / 2;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    s[..n].trim_end().to_string()
}

fn ours(kind: &str, text: &str) -> Option<String> {
    match kind {
        "V" => normalize_version(text).ok(),
        "R" => parse_requirement(text).ok().map(|_| "ok".to_string()),
        _ => validate_specifiers(text).ok().map(|_| "ok".to_string()),
    }
}

#[test]
fn real_metadata_agrees_with_packaging_and_pep508_rs() {
    let real = harvest();
    let count = |k: &str| real.iter().filter(|(kind, _)| kind == k).count();
    // The dev venv alone holds dozens of distributions (pip, packaging,
    // twine, auditwheel, BuildGrid's dependencies): a short corpus means the
    // harvest broke, not that there is little to compare.
    assert!(
        count("V") >= 30 && count("R") >= 50 && count("S") >= FLOOR_REQUIRES_PYTHON,
        "corpus too small ({} versions, {} requirements, {} Requires-Python values): is the dev \
         venv complete (make setup)?",
        count("V"),
        count("R"),
        count("S")
    );
    // Every committed PyPI METADATA was read (its version is in the corpus).
    for f in pypi_metadata() {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let version = stem.rsplit_once('-').unwrap().1;
        assert!(
            real.contains(&("V".to_string(), version.to_string())),
            "{} was not harvested",
            f.display()
        );
    }
    let mut items: BTreeSet<Item> = real.iter().cloned().collect();
    for (_, r) in real.iter().filter(|(k, _)| k == "R") {
        items.insert(("R".into(), cut(r)));
    }
    let items: Vec<Item> = items.into_iter().collect();
    let theirs: Vec<Option<String>> = serde_json::from_slice(&test_support::venv_python::<&str>(
        JUDGE,
        &[],
        &serde_json::to_vec(&items).unwrap(),
    ))
    .unwrap();

    let mut disagree = BTreeSet::new();
    let mut refused = 0;
    for ((kind, text), theirs) in items.iter().zip(&theirs) {
        let ours = ours(kind, text);
        refused += usize::from(ours.is_none());
        if &ours != theirs {
            disagree.insert(format!(
                "{kind} {text:?}: ours {ours:?}, packaging {theirs:?}"
            ));
        }
        if kind == "R" {
            let uv = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(text).is_ok();
            if ours.is_some() != uv {
                disagree.insert(format!(
                    "R {text:?}: ours {}, pep508_rs {}",
                    verdict(ours.is_some()),
                    verdict(uv)
                ));
            }
        }
    }
    eprintln!(
        "compared {} versions, {} requirements ({} cut short), {} Requires-Python values; {refused} refused",
        count("V"),
        items.iter().filter(|(k, _)| k == "R").count(),
        items.len() - real.len(),
        count("S")
    );
    // Both sides must have refused something, or the damaged half of the
    // corpus tested nothing.
    assert!(
        refused > 0,
        "no case was refused: the cut requirements are not reaching the parsers"
    );
    assert!(
        disagree.is_empty(),
        "{} disagreements:\n{}",
        disagree.len(),
        disagree.into_iter().collect::<Vec<_>>().join("\n")
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "accepts"
    } else {
        "refuses"
    }
}
