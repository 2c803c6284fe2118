//! SPDX license expressions (`License-Expression`, PEP 639): the syntax
//! only, since the list of license ids keeps changing.

use anyhow::{bail, Context, Result};

/// SPDX license expression syntax: ids (`MIT`, `LicenseRef-x`, `GPL-2.0+`),
/// `AND`/`OR`, `WITH <exception>` and parentheses. The id list itself is not
/// checked (it changes); the syntax is.
pub fn validate_license_expression(e: &str) -> Result<()> {
    let tokens = lex_license(e)?;
    let mut i = 0;
    let res = lic_or(&tokens, &mut i).and_then(|_| {
        if i == tokens.len() {
            Ok(())
        } else if ["and", "or", "with"].contains(&tokens[i].to_ascii_lowercase().as_str()) {
            bail!("operator {:?} must be uppercase", tokens[i])
        } else {
            bail!("unexpected {:?}", tokens[i])
        }
    });
    res.with_context(|| {
        format!("metadata.license_expression {e:?} is not a valid SPDX expression (e.g. \"Apache-2.0\", \"MIT OR Apache-2.0\", \"GPL-2.0-only WITH Classpath-exception-2.0\")")
    })
}

fn lex_license(e: &str) -> Result<Vec<String>> {
    let mut t = Vec::new();
    let mut cur = String::new();
    for c in e.chars() {
        if c == '(' || c == ')' || c.is_whitespace() {
            if !cur.is_empty() {
                t.push(std::mem::take(&mut cur));
            }
            if !c.is_whitespace() {
                t.push(c.to_string());
            }
        } else if c.is_ascii_alphanumeric() || "-.+:".contains(c) {
            cur.push(c);
        } else {
            bail!("metadata.license_expression {e:?}: character {c:?} is not allowed in SPDX expressions");
        }
    }
    if !cur.is_empty() {
        t.push(cur);
    }
    if t.is_empty() {
        bail!("metadata.license_expression is empty");
    }
    Ok(t)
}

fn is_op(t: &str) -> bool {
    matches!(t, "AND" | "OR" | "WITH" | "(" | ")")
}

fn lic_id(t: &str) -> bool {
    let body = t.strip_suffix('+').unwrap_or(t);
    !is_op(t)
        && !body.is_empty()
        && body.starts_with(|c: char| c.is_ascii_alphanumeric())
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.:".contains(c))
        && !["and", "or", "with"].contains(&t.to_ascii_lowercase().as_str())
}

fn lic_or(t: &[String], i: &mut usize) -> Result<()> {
    lic_and(t, i)?;
    while t.get(*i).is_some_and(|x| x == "OR") {
        *i += 1;
        lic_and(t, i)?;
    }
    Ok(())
}

fn lic_and(t: &[String], i: &mut usize) -> Result<()> {
    lic_with(t, i)?;
    while t.get(*i).is_some_and(|x| x == "AND") {
        *i += 1;
        lic_with(t, i)?;
    }
    Ok(())
}

fn lic_with(t: &[String], i: &mut usize) -> Result<()> {
    match t.get(*i).map(String::as_str) {
        Some("(") => {
            *i += 1;
            lic_or(t, i)?;
            if t.get(*i).map(String::as_str) != Some(")") {
                bail!("missing ')'");
            }
            *i += 1;
        }
        Some(id) if lic_id(id) => {
            *i += 1;
            if t.get(*i).is_some_and(|x| x == "WITH") {
                *i += 1;
                match t.get(*i) {
                    Some(x) if lic_id(x) && !x.ends_with('+') => *i += 1,
                    _ => bail!("expected an exception id after WITH"),
                }
            }
        }
        Some(x)
            if ["and", "or", "with"].contains(&x.to_ascii_lowercase().as_str()) && !is_op(x) =>
        {
            bail!("operator {x:?} must be uppercase")
        }
        Some(x) => bail!("expected a license id, got {x:?}"),
        None => bail!("expression ends where a license id is expected"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn license_expressions() {
        for ok in [
            "Apache-2.0",
            "MIT OR Apache-2.0",
            "(MIT OR Apache-2.0) AND BSD-3-Clause",
            "GPL-2.0-only WITH Classpath-exception-2.0",
            "LicenseRef-AMD-Proprietary",
            "GPL-2.0+",
            "DocumentRef-x:LicenseRef-y",
        ] {
            validate_license_expression(ok).unwrap_or_else(|e| panic!("{ok}: {e:#}"));
        }
        for (bad, why) in [
            ("", "empty"),
            ("MIT or Apache-2.0", "uppercase"),
            ("MIT OR", "ends where"),
            ("(MIT", "missing ')'"),
            ("MIT Apache-2.0", "unexpected"),
            ("MIT WITH", "exception id"),
            ("MIT/Apache", "not allowed"),
            ("AND MIT", "expected a license id"),
        ] {
            let e = format!("{:#}", validate_license_expression(bad).unwrap_err());
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
