//! The `--gfx` expansion cases shared with the Starlark side
//! (`tests/outputs/gfx/expand_cases.bzl`, whose JSON this reads): one semantics,
//! one table.

use std::collections::BTreeSet;

use gfx_targets::expand;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = test_support::repo_root().join("tests/outputs/gfx/expand_cases.bzl");
    let text = std::fs::read_to_string(&path).unwrap();
    let json = text.split("\"\"\"").nth(3).unwrap_or_else(|| {
        panic!(
            "{}: no json.decode(\"\"\"...\"\"\") after the docstring",
            path.display()
        )
    });
    serde_json::from_str(json).unwrap()
}

#[test]
fn the_shared_cases_hold() {
    let cases = cases();
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let value = case["value"].as_str().unwrap();
        match (expand(value), case.get("targets")) {
            (Ok(requested), Some(want)) => {
                let got: BTreeSet<String> = requested.into_iter().flat_map(|r| r.targets).collect();
                let want: BTreeSet<String> = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_string())
                    .collect();
                if got != want {
                    failures.push(format!("{value:?}: got {got:?}, want {want:?}"));
                }
            }
            (Ok(requested), None) => failures.push(format!(
                "{value:?}: accepted as {:?}, want an error",
                requested
                    .iter()
                    .flat_map(|r| r.targets.clone())
                    .collect::<Vec<_>>()
            )),
            (Err(e), Some(_)) => failures.push(format!("{value:?}: unexpected error {e:#}")),
            (Err(e), None) => {
                let e = format!("{e:#}");
                for needle in case["error"].as_array().unwrap() {
                    if !e.contains(needle.as_str().unwrap()) {
                        failures.push(format!("{value:?}: error lacks {needle}: {e}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
