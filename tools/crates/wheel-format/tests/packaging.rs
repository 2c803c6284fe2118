//! Differential test: `License-Expression` verdicts and normal forms of
//! wheel-format against `packaging.licenses.canonicalize_license_expression`
//! (what pip and PyPI run), every id of the SPDX list included, in one
//! batch through the dev venv's python.

use std::collections::BTreeSet;

use wheel_format::{canonical_license_expression, spdx_ids};

/// Reads a JSON list of expressions; writes packaging's normal form of
/// each (`null`: refused) and packaging's own id lists.
const SCRIPT: &str = r#"
import json, sys
from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
from packaging.licenses._spdx import EXCEPTIONS, LICENSES, VERSION
out = []
for e in json.load(sys.stdin):
    try:
        out.append(canonicalize_license_expression(e))
    except InvalidLicenseExpression:
        out.append(None)
json.dump({
    "version": VERSION,
    "licenses": [v["id"] for v in LICENSES.values()],
    "exceptions": [v["id"] for v in EXCEPTIONS.values()],
    "results": out,
}, sys.stdout)
"#;

/// Ids of the spdx crate's list (0.13.6: SPDX 3.29.0) that packaging's
/// bundled list (26.4, pinned in tools/requirements-dev.txt: SPDX 3.27.0)
/// does not have yet: added to the SPDX list in 3.28.0 and
/// 3.29.0, so we accept them and packaging refuses them. Ids are never
/// removed from the list (deprecated ones stay), so there is no reverse
/// list; deprecation itself changes no verdict (both accept deprecated
/// ids).
const ADDED_AFTER_PACKAGING_LIST: &[&str] = &[
    "ALGLIB-Documentation",
    "Advanced-Cryptics-Dictionary",
    "BOLA-1.1",
    "BSD-2-Clause-pos-unchanged",
    "BSD-3-Clause-OpenWebUI",
    "BSD-3-Clause-Tso",
    "BSD-Mark-Modifications",
    "BSD-Source-Code-no-disclaimer",
    "BSD-Source-alt-GPL",
    "BSD-ask-to-endorse",
    "Brian-Gladman-3-Clause-no-conversion",
    "Buddy",
    "Bugroff",
    "CAPEC-tou",
    "CC-BY-NC-3.0-IGO",
    "Classpath-exception-2.0-short",
    "ESA-PL-permissive-2.4",
    "ESA-PL-strong-copyleft-2.4",
    "ESA-PL-weak-copyleft-2.4",
    "FDK-MPEG-H",
    "Google-Patent-WebM",
    "HPND-SMC",
    "HPND-sell-variant-critical-systems",
    "Hippocratic-3.0-core",
    "ISO-permission",
    "Informatica",
    "MIT-STK",
    "MMPL-1.0.1",
    "MVT-1.1",
    "NIST-PD-TNT",
    "OSC-1.0",
    "OSSP",
    "OpenMDW-1.0",
    "ParaType-Free-Font-1.3",
    "SGMLUG-PM",
    "Simple-Library-Usage-exception",
    "Spelling-Provider-LGPL-exception",
    "TekHVC",
    "UnRAR",
    "Vixie-Cron",
    "WTFNMFPL",
    "WordNet",
    "X11-no-permit-persons",
    "atc-game",
    "hyphen-bulgarian",
    "kvirc-openssl-exception",
    "rsync-linking-exception",
    "sqlitestudio-OpenSSL-exception",
];

struct Packaging {
    version: String,
    ids: BTreeSet<String>,
    results: Vec<Option<String>>,
}

fn run_packaging(cases: &[String]) -> Packaging {
    let out = test_support::venv_python::<&str>(SCRIPT, &[], &serde_json::to_vec(cases).unwrap());
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let strs = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let mut ids: BTreeSet<String> = strs("licenses").into_iter().collect();
    ids.extend(strs("exceptions"));
    let results = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect();
    Packaging {
        version: v["version"].as_str().unwrap().to_string(),
        ids,
        results,
    }
}

/// One edit away from `id`: a deletion, a substitution, an insertion and a
/// transposition, at positions spread over the id.
fn typos(id: &str) -> Vec<String> {
    let c: Vec<char> = id.chars().collect();
    let n = c.len();
    let s = |v: Vec<char>| v.into_iter().collect::<String>();
    let mut out = Vec::new();
    let mut del = c.clone();
    del.remove(n / 2);
    out.push(s(del));
    let mut sub = c.clone();
    sub[n - 1] = if sub[n - 1] == 'x' { 'y' } else { 'x' };
    out.push(s(sub));
    let mut ins = c.clone();
    ins.insert(n / 3, 'q');
    out.push(s(ins));
    if n > 1 {
        let mut tr = c.clone();
        tr.swap(0, 1);
        out.push(s(tr));
    }
    out
}

fn cases(licenses: &[String], exceptions: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for id in licenses {
        out.extend([
            id.clone(),
            id.to_lowercase(),
            id.to_uppercase(),
            format!("{id}+"),
        ]);
        out.extend(typos(id));
    }
    for x in exceptions {
        out.push(format!("MIT WITH {x}"));
        out.push(format!("mit with {}", x.to_lowercase()));
        out.push(format!("GPL-2.0-or-later WITH {}", x.to_uppercase()));
        out.extend(typos(x).into_iter().map(|t| format!("Apache-2.0 WITH {t}")));
        out.push(x.clone());
    }
    for (i, w) in licenses.windows(3).enumerate().step_by(11) {
        let x = &exceptions[i % exceptions.len()];
        out.push(format!("({} OR {}) AND {} WITH {x}", w[0], w[1], w[2]));
        out.push(format!("{} and ( {} or {} )", w[0], w[1], w[2]).to_lowercase());
        out.push(format!("{} OR({}AND {})", w[0], w[1], w[2]));
    }
    out.extend(HAND_WRITTEN.iter().map(|s| s.to_string()));
    // packaging's nesting limit (200 parentheses), on both sides of it.
    for depth in [199, 200, 201, 202] {
        out.push(format!("{}MIT{}", "(".repeat(depth), ")".repeat(depth)));
        out.push(format!(
            "0BSD OR {}mit and apache-2.0{}",
            "( ".repeat(depth),
            " )".repeat(depth)
        ));
    }
    out
}

/// Syntax corners: operators' case, spacing, parentheses, refs.
const HAND_WRITTEN: &[&str] = &[
    "",
    " ",
    "MIT",
    " MIT ",
    "MIT\tOR\nApache-2.0",
    "MIT\u{1c}OR 0BSD",
    "MIT or Apache-2.0",
    "MIT Or Apache-2.0",
    "MIT OR",
    "OR MIT",
    "MIT OR OR Apache-2.0",
    "MIT AND",
    "(MIT",
    "MIT)",
    "()",
    "(MIT)",
    "((MIT))",
    "( ( MIT ) )",
    "MIT (Apache-2.0)",
    "(MIT) Apache-2.0",
    "(MIT) WITH LLVM-exception",
    "MIT WITH LLVM-exception WITH LLVM-exception",
    "MIT WITH (LLVM-exception)",
    "MIT WITH",
    "WITH LLVM-exception",
    "LLVM-exception",
    "MIT WITH MIT",
    "Apache-2.0 WITH LLVM-exception OR MIT",
    "(Apache-2.0 WITH LLVM-exception) AND (MIT OR 0BSD)",
    "MIT AND Apache-2.0 OR BSD-3-Clause",
    "LicenseRef-AMD-Proprietary",
    "licenseref-amd-proprietary",
    "LICENSEREF-X.y-1",
    "LicenseRef-x AND licenseref-X",
    "LicenseRef-",
    "LicenseRef-a_b",
    "LicenseRef-a:b",
    "LicenseRef-x+",
    "LicenseRef-\u{e9}",
    "DocumentRef-x:LicenseRef-y",
    "MIT WITH AdditionRef-x",
    "MIT WITH LicenseRef-x",
    "NOASSERTION",
    "NONE",
    "GFDL-1.1-invariants",
    "GFDL-1.1-invariants-only",
    "GPL-2.0",
    "GPL-2.0+",
    "GPL-2.0-only+",
    "MIT++",
    "MIT/Apache-2.0",
    "MIT,Apache-2.0",
    "and",
    "MIT AND and",
    "false",
    "MIT \u{130}OR 0BSD",
];

/// Tokens of `e` lowercased, `+` dropped: to see which ids it names.
fn names(e: &str) -> Vec<String> {
    e.replace(['(', ')'], " ")
        .split_whitespace()
        .map(|t| t.trim_end_matches('+').to_lowercase())
        .collect()
}

/// The cases where `ours` and packaging differ, split into the accepted
/// ones (an id added to the list after packaging's version, which we
/// accept and packaging refuses), as the expressions, and the rest, as
/// lines to print.
fn compare(
    cases: &[String],
    theirs: &[Option<String>],
    ours: &[Option<String>],
) -> (Vec<String>, Vec<String>) {
    let added: BTreeSet<String> = ADDED_AFTER_PACKAGING_LIST
        .iter()
        .map(|s| s.to_lowercase())
        .collect();
    let (mut accepted, mut failed) = (Vec::new(), Vec::new());
    for ((e, t), o) in cases.iter().zip(theirs).zip(ours) {
        if o == t {
            continue;
        }
        if o.is_some() && t.is_none() && names(e).iter().any(|n| added.contains(n)) {
            accepted.push(e.clone());
        } else {
            failed.push(format!("{e:?}: ours {o:?}, packaging {t:?}"));
        }
    }
    (accepted, failed)
}

#[test]
fn agrees_with_packaging() {
    let (lic, exc) = spdx_ids();
    let lic: Vec<String> = lic.into_iter().map(str::to_string).collect();
    let exc: Vec<String> = exc.into_iter().map(str::to_string).collect();
    let cases = cases(&lic, &exc);
    let p = run_packaging(&cases);
    assert_eq!(p.results.len(), cases.len());
    // The lists may differ only by the ids listed, so every id of either
    // list is a case here.
    let ours_ids: BTreeSet<String> = lic.iter().chain(&exc).cloned().collect();
    let only_ours: BTreeSet<String> = ours_ids.difference(&p.ids).cloned().collect();
    let only_theirs: BTreeSet<String> = p.ids.difference(&ours_ids).cloned().collect();
    let expected: BTreeSet<String> = ADDED_AFTER_PACKAGING_LIST
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        only_theirs.is_empty() && only_ours == expected,
        "the id lists differ otherwise than by ADDED_AFTER_PACKAGING_LIST: only ours {only_ours:?}, \
         only packaging {only_theirs:?}; update that list (with the reason) for the SPDX list \
         versions of the spdx crate and packaging"
    );
    let ours: Vec<Option<String>> = cases
        .iter()
        .map(|e| canonical_license_expression(e).ok())
        .collect();
    let (accepted, failed) = compare(&cases, &p.results, &ours);
    eprintln!(
        "compared {} expressions with packaging (SPDX list {} there, {} here): {} differences accepted (ids added after packaging's list), {} not",
        cases.len(),
        p.version,
        wheel_format::spdx_list_version(),
        accepted.len(),
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} differences from packaging:\n{}",
        failed.len(),
        failed.join("\n")
    );
    // Every added id is a difference at least once: the list is no
    // larger than needed.
    for id in ADDED_AFTER_PACKAGING_LIST {
        assert!(
            accepted
                .iter()
                .any(|e| names(e).contains(&id.to_lowercase())),
            "{id} is in ADDED_AFTER_PACKAGING_LIST but no case differs on it"
        );
    }

    negative_controls(&cases, &p.results, &ours);
}

/// A checker that leaves the case as given, and one that also accepts
/// `DocumentRef-`, must both be caught: the comparison can fail.
fn negative_controls(cases: &[String], theirs: &[Option<String>], ours: &[Option<String>]) {
    let keeps_case: Vec<Option<String>> = cases
        .iter()
        .zip(ours)
        .map(|(e, o)| o.as_ref().map(|_| e.clone()))
        .collect();
    let (_, kept) = compare(cases, theirs, &keeps_case);
    assert!(
        kept.len() > 1000,
        "negative control (case kept) found only {} differences",
        kept.len()
    );
    let lax: Vec<Option<String>> = cases
        .iter()
        .zip(ours)
        .map(|(e, o)| {
            o.clone()
                .or_else(|| e.starts_with("DocumentRef-").then(|| e.clone()))
        })
        .collect();
    let (_, f) = compare(cases, theirs, &lax);
    assert_eq!(
        f.len(),
        1,
        "negative control (DocumentRef- accepted): {f:?}"
    );
    eprintln!(
        "negative controls: {} and {} differences found",
        kept.len(),
        f.len()
    );
}
