//! Differential test on real metadata: every `Version`, `Requires-Dist` and
//! `Requires-Python` of the distributions installed in the dev venv and in
//! the interpreter running the test's system site-packages (the build root's
//! Debian packages under `make rust-test`), and of the PyPI wheels the
//! e2e tests downloaded (`~/.cache/rules_rocm/wheels`, when present), judged
//! by wheel-format and by `packaging` (what pip and PyPI run).
//!
//! Versions must give the same verdict and the same normal form;
//! requirements and specifier sets the same verdict (wheel-format writes them
//! as given, so there is no normal form of ours to compare).

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use wheel_format::{normalize_version, parse_requirement, validate_specifiers};

/// Collects the corpus (argv[1:]: extra site-packages directories, then
/// wheel files) and judges each item: `[kind, text, verdict]`, where the
/// verdict is the normal form (versions), "ok", or null (refused).
const SCRIPT: &str = r#"
import email.parser, importlib.metadata as md, json, sys, zipfile
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

def fields(msg):
    yield "V", msg.get("Version")
    for r in msg.get_all("Requires-Dist") or []:
        yield "R", r
    yield "S", msg.get("Requires-Python")

items = set()
dirs = [a for a in sys.argv[1:] if not a.endswith(".whl")]
for d in md.distributions(path=sys.path + dirs):
    items.update((k, v) for k, v in fields(d.metadata) if v is not None)
for w in (a for a in sys.argv[1:] if a.endswith(".whl")):
    with zipfile.ZipFile(w) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        msg = email.parser.BytesParser().parsebytes(z.read(name))
        items.update((k, v) for k, v in fields(msg) if v is not None)

def judge(kind, text):
    try:
        if kind == "V":
            return str(Version(text))
        (Requirement if kind == "R" else SpecifierSet)(text)
        return "ok"
    except Exception:
        return None

json.dump([[k, t, judge(k, t)] for k, t in sorted(items)], sys.stdout)
"#;

fn corpus() -> Vec<(String, String, Option<String>)> {
    let mut args: Vec<String> = Vec::new();
    // The build root's Debian-packaged distributions (when the test runs
    // there; absent directories are ignored by importlib).
    args.push("/usr/lib/python3/dist-packages".into());
    let cache =
        std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache/rules_rocm/wheels"));
    if let Some(entries) = cache.and_then(|c| std::fs::read_dir(c).ok()) {
        let mut wheels: Vec<String> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "whl"))
            .map(|p| p.display().to_string())
            .collect();
        wheels.sort();
        args.extend(wheels);
    }
    let out = Command::new(test_support::venv_bin("python"))
        .arg("-c")
        .arg(SCRIPT)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("run the venv's python");
    assert!(out.status.success(), "packaging script failed: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn real_metadata_agrees_with_packaging() {
    let items = corpus();
    let count = |k: &str| items.iter().filter(|(kind, _, _)| kind == k).count();
    // The dev venv alone holds dozens of distributions (pip, packaging,
    // twine, auditwheel, BuildGrid's dependencies): a short corpus means the
    // harvest broke, not that there is little to compare.
    assert!(
        count("V") >= 30 && count("R") >= 50,
        "corpus too small ({} versions, {} requirements): is the dev venv complete (make setup)?",
        count("V"),
        count("R")
    );
    let mut disagree = BTreeSet::new();
    for (kind, text, theirs) in &items {
        let ours = match kind.as_str() {
            "V" => normalize_version(text).ok(),
            "R" => parse_requirement(text).ok().map(|_| "ok".to_string()),
            _ => validate_specifiers(text).ok().map(|_| "ok".to_string()),
        };
        if &ours != theirs {
            disagree.insert(format!(
                "{kind} {text:?}: ours {ours:?}, packaging {theirs:?}"
            ));
        }
    }
    eprintln!(
        "compared {} versions, {} requirements, {} Requires-Python values",
        count("V"),
        count("R"),
        count("S")
    );
    assert!(
        disagree.is_empty(),
        "{} disagreements with packaging:\n{}",
        disagree.len(),
        disagree.into_iter().collect::<Vec<_>>().join("\n")
    );
}
