//! SPDX license expressions (`License-Expression`, PEP 639), judged as pip
//! and PyPI judge them: with `packaging.licenses.canonicalize_license_expression`.
//!
//! Where the ids come from: the `spdx` crate (0.13.6, SPDX license list
//! 3.29.0; [`spdx_list_version`]), its `identifiers` tables of license
//! and exception ids, deprecated ones included as packaging includes them,
//! looked up case-insensitively, less the entries the crate adds that are
//! not list ids (`NOT_IN_SPDX_LIST`).
//!
//! Hand-written, and why: the grammar and the normal form. They are
//! packaging's rules, not the SPDX specification's, and the `spdx` crate's
//! parser follows the specification: packaging takes operators in any
//! case, splits on whitespace and parentheses only, allows `WITH` only
//! between a license id and an exception id (not after a group), at most
//! 200 nested parentheses, `LicenseRef-` with `[A-Za-z0-9.-]+` and no `+`,
//! and refuses `DocumentRef-` and `AdditionRef-`. `tests/packaging.rs`
//! compares this module with packaging on every id of the list.
//!
//! Canonical form: [`validate_license_expression`] (what `rocm-wheel build`
//! runs) refuses an expression that is valid but not in packaging's normal
//! form (`apache-2.0 OR mit`), naming the normal form (`Apache-2.0 OR MIT`):
//! the user's license text is then written exactly as given and is already
//! what pip and PyPI would make of it, instead of being changed silently.
//! [`canonical_license_expression`] returns the normal form.

use std::collections::HashMap;
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};

/// The SPDX license list version the ids come from.
pub fn spdx_list_version() -> &'static str {
    spdx::license_version()
}

/// Every license id and every exception id accepted (the SPDX list's,
/// deprecated ones included, as packaging accepts them), in list order.
pub fn spdx_ids() -> (Vec<&'static str>, Vec<&'static str>) {
    let lic = spdx::identifiers::LICENSES
        .iter()
        .map(|l| l.name)
        .filter(|n| !NOT_IN_SPDX_LIST.contains(n))
        .collect();
    let exc = spdx::identifiers::EXCEPTIONS
        .iter()
        .map(|x| x.name)
        .collect();
    (lic, exc)
}

const EXAMPLES: &str =
    "e.g. \"Apache-2.0\", \"MIT OR Apache-2.0\", \"GPL-2.0-only WITH Classpath-exception-2.0\", \"LicenseRef-Proprietary\"";

/// packaging's limit on nested parentheses.
const MAX_DEPTH: usize = 200;

/// Checks `e` as packaging does and requires it in packaging's normal form,
/// so the `License-Expression` written is the one pip and PyPI would use.
pub fn validate_license_expression(e: &str) -> Result<()> {
    let canonical = canonical_license_expression(e).context("metadata.license_expression")?;
    if canonical != e {
        bail!(
            "metadata.license_expression {e:?} is valid but not in canonical form: write {canonical:?} \
             (pip and PyPI normalise it to that; rocm-wheel writes a license text only as given)"
        );
    }
    Ok(())
}

/// The normal form of `e` as `packaging.licenses.canonicalize_license_expression`
/// returns it: ids spelled as in the SPDX list, operators uppercase, single
/// spaces, no space inside parentheses. An invalid expression is an error
/// naming the closest id of the list where an id is unknown.
pub fn canonical_license_expression(e: &str) -> Result<String> {
    let ctx = |why: String| anyhow::anyhow!("{e:?} is not a valid SPDX license expression: {why}");
    if e.is_empty() {
        bail!("the license expression is empty; give an SPDX expression ({EXAMPLES})");
    }
    let raw: Vec<&str> = split_tokens(e);
    let mut refs: HashMap<String, String> = HashMap::new();
    let mut tokens = Vec::with_capacity(raw.len());
    for r in &raw {
        let low = r.to_lowercase();
        if low.starts_with("licenseref-") {
            if !r.is_ascii() {
                return Err(ctx(format!(
                    "{r:?}: a LicenseRef- id takes ASCII letters, digits, '.' and '-' only"
                )));
            }
            // SPDX ref idstrings are case-insensitive: the first spelling wins.
            refs.entry(low.clone())
                .or_insert_with(|| format!("LicenseRef-{}", &r["LicenseRef-".len()..]));
        }
        tokens.push(low);
    }
    check_syntax(&tokens).map_err(|w| ctx(format!("{w} ({EXAMPLES})")))?;
    normalise(&raw, &tokens, &refs).map_err(ctx)
}

/// Splits on whitespace as Python's `str.split()` does (which also splits
/// on the ASCII separators U+001C..U+001F), with parentheses as tokens.
fn split_tokens(e: &str) -> Vec<&str> {
    let is_space = |c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in e.char_indices() {
        if is_space(c) || c == '(' || c == ')' {
            if let Some(s) = start.take() {
                out.push(&e[s..i]);
            }
            if c == '(' || c == ')' {
                out.push(&e[i..i + 1]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&e[s..]);
    }
    out
}

fn is_operator(t: &str) -> bool {
    matches!(t, "or" | "and" | "with" | "(" | ")")
}

/// Token order and parentheses: `name (AND|OR|WITH name)*`, where a name
/// may be a parenthesised group.
fn check_syntax(tokens: &[String]) -> std::result::Result<(), String> {
    let mut depth = 0usize;
    let mut expect_operand = true;
    for t in tokens {
        match t.as_str() {
            "(" if !expect_operand => return Err("'(' after a license id".into()),
            "(" if depth >= MAX_DEPTH => {
                return Err(format!("more than {MAX_DEPTH} nested parentheses"))
            }
            "(" => depth += 1,
            ")" if expect_operand => return Err("')' where a license id is expected".into()),
            ")" if depth == 0 => return Err("')' without '('".into()),
            ")" => depth -= 1,
            "or" | "and" | "with" if expect_operand => {
                return Err(format!(
                    "operator {:?} where a license id is expected",
                    t.to_uppercase()
                ))
            }
            "or" | "and" | "with" => expect_operand = true,
            _ if !expect_operand => {
                return Err(format!(
                    "{t:?} follows a license id without AND, OR or WITH"
                ))
            }
            _ => expect_operand = false,
        }
    }
    if tokens.is_empty() {
        Err("no license id".into())
    } else if expect_operand {
        Err("the expression ends where a license id is expected".into())
    } else if depth > 0 {
        Err("missing ')'".into())
    } else {
        Ok(())
    }
}

/// The ids looked up and respelled; `WITH` only right after a license id
/// and before an exception id.
fn normalise(
    raw: &[&str],
    tokens: &[String],
    refs: &HashMap<String, String>,
) -> std::result::Result<String, String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    let mut after_license = false;
    for (i, t) in tokens.iter().enumerate() {
        if is_operator(t) {
            if t == "with"
                && (!after_license || !matches!(tokens.get(i + 1), Some(n) if !is_operator(n)))
            {
                return Err(
                    "WITH must follow a license id (not a group or an exception) and precede an exception id".into(),
                );
            }
            out.push(t.to_uppercase());
            after_license = false;
        } else if out.last().is_some_and(|p| p == "WITH") {
            out.push(exception(raw[i], t)?.to_string());
            after_license = false;
        } else {
            out.push(license(raw[i], t, refs)?);
            after_license = true;
        }
    }
    Ok(out.join(" ").replace("( ", "(").replace(" )", ")"))
}

/// A license id (with an optional `+`) or a `LicenseRef-`.
fn license(
    raw: &str,
    low: &str,
    refs: &HashMap<String, String>,
) -> std::result::Result<String, String> {
    let (body, plus) = match low.strip_suffix('+') {
        Some(b) => (b, "+"),
        None => (low, ""),
    };
    if let Some(idstring) = body.strip_prefix("licenseref-") {
        let ok = !idstring.is_empty()
            && idstring
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !plus.is_empty() || !ok {
            return Err(format!(
                "{raw:?}: a LicenseRef- id takes ASCII letters, digits, '.' and '-' only (and no '+'), e.g. \"LicenseRef-Proprietary\""
            ));
        }
        return Ok(refs[body].clone());
    }
    if let Some(id) = licenses().get(body) {
        return Ok(format!("{id}{plus}"));
    }
    let lower = raw.to_ascii_lowercase();
    let hint = if lower.starts_with("documentref-") {
        "pip and PyPI (packaging) do not accept DocumentRef-; use a LicenseRef- id".to_string()
    } else {
        format!(
            "did you mean {:?}? Use an id of the SPDX license list {} (https://spdx.org/licenses/) or a LicenseRef- id",
            closest(body, licenses()),
            spdx_list_version()
        )
    };
    Err(format!("unknown license id {raw:?}: {hint}"))
}

/// An exception id after `WITH`.
fn exception(raw: &str, low: &str) -> std::result::Result<&'static str, String> {
    if let Some(id) = exceptions().get(low) {
        return Ok(id);
    }
    let hint = if low.starts_with("additionref-") {
        "pip and PyPI (packaging) do not accept AdditionRef-; name the whole license as a LicenseRef- id instead".to_string()
    } else {
        format!(
            "did you mean {:?}? Use an exception id of the SPDX license list {} (https://spdx.org/licenses/exceptions-index.html)",
            closest(low, exceptions()),
            spdx_list_version()
        )
    };
    Err(format!("unknown license exception id {raw:?}: {hint}"))
}

/// Ids the `spdx` crate adds to its table that are not SPDX license list
/// ids, so pip and PyPI refuse them: `NOASSERTION` (an SPDX document value)
/// and the bare GFDL variants the crate makes for its own `+` handling.
const NOT_IN_SPDX_LIST: [&str; 7] = [
    "NOASSERTION",
    "GFDL-1.1-invariants",
    "GFDL-1.1-no-invariants",
    "GFDL-1.2-invariants",
    "GFDL-1.2-no-invariants",
    "GFDL-1.3-invariants",
    "GFDL-1.3-no-invariants",
];

/// Lowercased id -> id, for the case-insensitive lookup packaging does.
fn licenses() -> &'static HashMap<String, &'static str> {
    static M: OnceLock<HashMap<String, &'static str>> = OnceLock::new();
    M.get_or_init(|| {
        spdx::identifiers::LICENSES
            .iter()
            .filter(|l| !NOT_IN_SPDX_LIST.contains(&l.name))
            .map(|l| (l.name.to_ascii_lowercase(), l.name))
            .collect()
    })
}

fn exceptions() -> &'static HashMap<String, &'static str> {
    static M: OnceLock<HashMap<String, &'static str>> = OnceLock::new();
    M.get_or_init(|| {
        spdx::identifiers::EXCEPTIONS
            .iter()
            .map(|x| (x.name.to_ascii_lowercase(), x.name))
            .collect()
    })
}

/// The id of `ids` at the least case-insensitive edit distance from `low`;
/// on a tie the one sharing the longest start with it (`Apache-2.1` means
/// `Apache-2.0` rather than `Apache-1.1`), then the alphabetically first,
/// so the message is stable.
fn closest(low: &str, ids: &HashMap<String, &'static str>) -> &'static str {
    let n = low.chars().count();
    let mut best: Option<(usize, std::cmp::Reverse<usize>, &'static str)> = None;
    for (k, id) in ids {
        // The distance is at least the length difference: skip the ids
        // that cannot beat the best so far (most of the list).
        if best.is_some_and(|b| n.abs_diff(k.chars().count()) > b.0) {
            continue;
        }
        let shared = low
            .chars()
            .zip(k.chars())
            .take_while(|(a, b)| a == b)
            .count();
        let this = (edit_distance(low, k), std::cmp::Reverse(shared), *id);
        if best.is_none_or(|b| this < b) {
            best = Some(this);
        }
    }
    best.map_or("MIT", |b| b.2)
}

/// Edit distance over chars: insertions, deletions, substitutions and
/// swaps of two neighbours (optimal string alignment), since a swap is a
/// common typo (`MTI`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Rows i-2, i-1 and i of the table of distances of a[..i] and b[..j].
    let mut two: Vec<usize> = vec![0; b.len() + 1];
    let mut one: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let sub = one[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut v = sub.min(one[j] + 1).min(cur[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(two[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut two, &mut one);
        std::mem::swap(&mut one, &mut cur);
    }
    one[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_expressions_pass() {
        for ok in [
            "Apache-2.0",
            "MIT OR Apache-2.0",
            "(MIT OR Apache-2.0) AND BSD-3-Clause",
            "GPL-2.0-only WITH Classpath-exception-2.0",
            "LicenseRef-AMD-Proprietary",
            "GPL-2.0+",
            "((MIT))",
        ] {
            validate_license_expression(ok).unwrap_or_else(|e| panic!("{ok}: {e:#}"));
        }
    }

    #[test]
    fn normal_form_is_named() {
        for (given, canonical) in [
            ("apache-2.0 OR mit", "Apache-2.0 OR MIT"),
            ("MIT or Apache-2.0", "MIT OR Apache-2.0"),
            ("( MIT  OR  0bsd )", "(MIT OR 0BSD)"),
            (
                "licenseref-X AND LicenseRef-x",
                "LicenseRef-X AND LicenseRef-X",
            ),
            (
                "gpl-2.0-only with classpath-exception-2.0",
                "GPL-2.0-only WITH Classpath-exception-2.0",
            ),
        ] {
            assert_eq!(canonical_license_expression(given).unwrap(), canonical);
            let e = format!("{:#}", validate_license_expression(given).unwrap_err());
            assert!(
                e.contains(&format!("write {canonical:?}")),
                "{given:?}: {e}"
            );
        }
    }

    #[test]
    fn invalid_expressions_say_why() {
        for (bad, why) in [
            ("", "empty"),
            ("  ", "no license id"),
            ("MIT OR", "ends where"),
            ("(MIT", "missing ')'"),
            ("MIT (0BSD)", "'(' after"),
            ("MIT Apache-2.0", "without AND, OR or WITH"),
            ("MIT WITH", "ends where"),
            ("(MIT) WITH LLVM-exception", "WITH must follow"),
            ("AND MIT", "operator \"AND\""),
            ("MIT/Apache", "unknown license id"),
            ("Apache-2.1", "did you mean \"Apache-2.0\""),
            ("mti", "did you mean \"MIT\""),
            ("MIT WITH LLVM-exceptoin", "did you mean \"LLVM-exception\""),
            ("DocumentRef-x:LicenseRef-y", "DocumentRef-"),
            ("MIT WITH AdditionRef-x", "AdditionRef-"),
            ("LicenseRef-a_b", "ASCII letters"),
            ("LicenseRef-x+", "no '+'"),
        ] {
            let e = format!("{:#}", canonical_license_expression(bad).unwrap_err());
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn nesting_limit_is_packagings() {
        let nested = |n: usize| format!("{}MIT{}", "(".repeat(n), ")".repeat(n));
        assert!(canonical_license_expression(&nested(MAX_DEPTH)).is_ok());
        let e = canonical_license_expression(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(
            format!("{e:#}").contains("more than 200 nested parentheses"),
            "{e:#}"
        );
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("mit", "mit"), 0);
        assert_eq!(edit_distance("mti", "mit"), 1);
        assert_eq!(edit_distance("apache-2.1", "apache-2.0"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
