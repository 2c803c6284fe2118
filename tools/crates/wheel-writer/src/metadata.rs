//! The generated `.dist-info` text files: METADATA (core metadata 2.4),
//! WHEEL and entry_points.txt.

use crate::manifest::Manifest;
use crate::pep508::{parse_requirement, validate_specifiers};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use wheel_format::{canonical_name, validate_name, Tag};

/// A header value must be one line; a newline would start a new field.
fn one_line(field: &str, v: &str) -> Result<()> {
    if v.contains(['\n', '\r']) {
        bail!("metadata.{field} {v:?} contains a line break; it must be a single line");
    }
    if v.trim().is_empty() {
        bail!("metadata.{field} is empty; remove it or give a value");
    }
    Ok(())
}

/// Renders METADATA with fields in a fixed order, one line per value of a
/// multi-use field, and the description as the message body.
pub fn render_metadata(m: &Manifest) -> Result<String> {
    let md = &m.metadata;
    let mut out = String::new();
    let mut h = |k: &str, v: &str| {
        let _ = writeln!(out, "{k}: {v}");
    };
    h("Metadata-Version", "2.4");
    h("Name", &m.distribution);
    h("Version", &m.version);
    if let Some(s) = &md.summary {
        one_line("summary", s)?;
        h("Summary", s);
    }
    for (label, url) in &md.project_urls {
        check_project_url(label, url)?;
        h("Project-URL", &format!("{label}, {url}"));
    }
    for (k, field, v) in [
        ("author", "Author", &md.author),
        ("author_email", "Author-email", &md.author_email),
        ("maintainer", "Maintainer", &md.maintainer),
        ("maintainer_email", "Maintainer-email", &md.maintainer_email),
    ] {
        if let Some(v) = v {
            one_line(k, v)?;
            h(field, v);
        }
    }
    if let Some(l) = &md.license_expression {
        validate_license_expression(l)?;
        h("License-Expression", l);
    }
    for lf in &md.license_files {
        h("License-File", &lf.path);
    }
    if !md.keywords.is_empty() {
        check_keywords(&md.keywords)?;
        h("Keywords", &md.keywords.join(","));
    }
    for c in &md.classifiers {
        check_classifier(c, md.license_expression.is_some())?;
        h("Classifier", c);
    }
    if let Some(rp) = &md.requires_python {
        one_line("requires_python", rp)?;
        validate_specifiers(rp).context("in metadata.requires_python")?;
        h("Requires-Python", rp);
    }
    let extras = canonical_extras(&md.provides_extra)?;
    for r in &md.requires_dist {
        check_requirement(r, &extras)?;
        h("Requires-Dist", r);
    }
    for e in &extras {
        h("Provides-Extra", e);
    }
    if let Some(d) = &md.description {
        let ct = d.content_type.as_deref().unwrap_or("text/plain");
        validate_content_type(ct)?;
        h("Description-Content-Type", ct);
        let body = read_description(&d.src)?;
        out.push('\n');
        out.push_str(&body);
        if !body.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

fn check_project_url(label: &str, url: &str) -> Result<()> {
    one_line("project_urls", label)?;
    one_line("project_urls", url)?;
    if label.chars().count() > 32 || label.contains(',') {
        bail!("metadata.project_urls label {label:?} must be at most 32 characters without commas");
    }
    validate_url(url).with_context(|| format!("in metadata.project_urls[{label:?}]"))
}

fn check_keywords(keywords: &[String]) -> Result<()> {
    for k in keywords {
        one_line("keywords", k)?;
        if k.contains(',') {
            bail!(
                "metadata.keywords entry {k:?} contains a comma; give one keyword per list entry"
            );
        }
    }
    Ok(())
}

/// A well-formed classifier, and no license classifier next to a license
/// expression.
fn check_classifier(c: &str, has_license_expression: bool) -> Result<()> {
    one_line("classifiers", c)?;
    if c.split(" :: ")
        .any(|p| p.trim().is_empty() || p != p.trim())
    {
        bail!("metadata.classifiers entry {c:?} is malformed; classifiers look like \"Programming Language :: Python :: 3\"");
    }
    if has_license_expression && c.starts_with("License ::") {
        bail!("metadata.classifiers has {c:?} but metadata.license_expression is set; PEP 639 replaces license classifiers, remove it");
    }
    Ok(())
}

/// The extras, each required to be valid and already normalised.
fn canonical_extras(provides_extra: &[String]) -> Result<Vec<String>> {
    let mut extras = Vec::new();
    for e in provides_extra {
        validate_name(e).with_context(|| {
            format!("metadata.provides_extra entry {e:?} is not a valid extra name")
        })?;
        let c = canonical_name(e);
        if &c != e {
            bail!("metadata.provides_extra entry {e:?} is not normalised; use {c:?} (core metadata 2.3+)");
        }
        extras.push(c);
    }
    Ok(extras)
}

/// A valid PEP 508 requirement whose markers only use declared extras.
fn check_requirement(r: &str, extras: &[String]) -> Result<()> {
    one_line("requires_dist", r)?;
    let req = parse_requirement(r).context("in metadata.requires_dist")?;
    for e in &req.marker_extras {
        if !extras.contains(&canonical_name(e)) {
            bail!("metadata.requires_dist entry {r:?} uses extra {e:?}, which is not in metadata.provides_extra; add it there");
        }
    }
    Ok(())
}

fn read_description(src: &str) -> Result<String> {
    let body = std::fs::read(src).with_context(|| {
        format!("description file {src:?} does not exist or cannot be read; check metadata.description.src")
    })?;
    String::from_utf8(body)
        .map_err(|_| anyhow::anyhow!("description file {src:?} is not UTF-8 text"))
}

fn validate_url(url: &str) -> Result<()> {
    let ok = url.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && !rest.is_empty()
            && !rest.contains(char::is_whitespace)
    });
    if !ok {
        bail!("{url:?} is not a URL; give an absolute URL such as \"https://example.org/project\"");
    }
    Ok(())
}

fn validate_content_type(ct: &str) -> Result<()> {
    let mut parts = ct.split(';');
    let main = parts.next().unwrap().trim();
    const TYPES: &[&str] = &["text/plain", "text/x-rst", "text/markdown"];
    if !TYPES.contains(&main) {
        bail!("metadata.description.content_type {ct:?} is not one of {} (optionally with \"; charset=UTF-8\")", TYPES.join(", "));
    }
    for p in parts {
        let Some((k, v)) = p.trim().split_once('=') else {
            bail!("metadata.description.content_type {ct:?}: parameter {p:?} is not key=value");
        };
        match (k.trim(), v.trim()) {
            ("charset", v) if v.eq_ignore_ascii_case("utf-8") => {}
            ("charset", v) => bail!("metadata.description.content_type {ct:?}: charset {v:?} is not supported; use UTF-8"),
            ("variant", "GFM" | "CommonMark") if main == "text/markdown" => {}
            _ => bail!("metadata.description.content_type {ct:?}: unknown parameter {p:?} (markdown allows variant=GFM or variant=CommonMark)"),
        }
    }
    Ok(())
}

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

pub fn render_wheel(purelib: bool, tags: &[Tag]) -> String {
    let mut s = format!(
        "Wheel-Version: 1.0\nGenerator: {}\nRoot-Is-Purelib: {purelib}\n",
        crate::GENERATOR
    );
    for t in tags {
        let _ = writeln!(s, "Tag: {t}");
    }
    s
}

fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// entry_points.txt: INI, groups and names sorted (the maps are ordered).
pub fn render_entry_points(
    eps: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<Option<String>> {
    if eps.is_empty() {
        return Ok(None);
    }
    let mut s = String::new();
    for (group, entries) in eps {
        if group.is_empty() || group.contains(['[', ']', '\n', '\r']) || group.trim() != group {
            bail!("entry point group {group:?} is invalid: no brackets, line breaks or surrounding spaces");
        }
        let _ = writeln!(s, "[{group}]");
        for (name, value) in entries {
            if name.is_empty()
                || name.contains(['=', '\n', '\r'])
                || name.starts_with('[')
                || name.trim() != name
            {
                bail!("entry point name {name:?} in [{group}] is invalid: no '=', line breaks, leading '[' or surrounding spaces");
            }
            let (module, attr) = match value.split_once(':') {
                Some((m, a)) => (m.trim(), Some(a.trim())),
                None => (value.trim(), None),
            };
            let ok = module.split('.').all(is_identifier)
                && attr.is_none_or(|a| a.split('.').all(is_identifier));
            if !ok {
                bail!("entry point {name:?} in [{group}] has value {value:?}; expected \"package.module\" or \"package.module:object.attr\"");
            }
            let _ = writeln!(s, "{name} = {value}");
        }
        s.push('\n');
    }
    Ok(Some(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_fields_in_fixed_order() {
        let dir = tempfile::tempdir().unwrap();
        let readme = dir.path().join("README.md");
        std::fs::write(&readme, "# Title\n\nBody, no trailing newline").unwrap();
        let json = serde_json::json!({
            "distribution": "Jax-ROCm7-Plugin", "version": "0.7.1", "tags": ["py3-none-any"], "files": [],
            "metadata": {
                "description": {"src": readme, "content_type": "text/markdown"},
                "provides_extra": ["test", "gpu"],
                "requires_dist": ["a==1", "b; extra == 'test'"],
                "requires_python": ">=3.10",
                "classifiers": ["Programming Language :: Python :: 3"],
                "keywords": ["jax", "rocm"],
                "license_files": [{"path": "LICENSE", "src": "x"}, {"path": "sub/NOTICE", "src": "y"}],
                "license_expression": "Apache-2.0",
                "maintainer_email": "m@x", "maintainer": "M", "author_email": "a@x", "author": "A",
                "project_urls": [["Source", "https://s.example"], ["Homepage", "https://h.example"]],
                "summary": "S"
            }
        });
        let m = Manifest::from_json(&json.to_string()).unwrap();
        assert_eq!(
            render_metadata(&m).unwrap(),
            "Metadata-Version: 2.4\nName: Jax-ROCm7-Plugin\nVersion: 0.7.1\nSummary: S\n\
             Project-URL: Source, https://s.example\nProject-URL: Homepage, https://h.example\n\
             Author: A\nAuthor-email: a@x\nMaintainer: M\nMaintainer-email: m@x\n\
             License-Expression: Apache-2.0\nLicense-File: LICENSE\nLicense-File: sub/NOTICE\n\
             Keywords: jax,rocm\nClassifier: Programming Language :: Python :: 3\n\
             Requires-Python: >=3.10\nRequires-Dist: a==1\nRequires-Dist: b; extra == 'test'\n\
             Provides-Extra: test\nProvides-Extra: gpu\nDescription-Content-Type: text/markdown\n\
             \n# Title\n\nBody, no trailing newline\n"
        );
    }

    #[test]
    fn metadata_field_errors() {
        let bad = |md: serde_json::Value, want: &str| {
            let json = serde_json::json!({"distribution": "a", "version": "1", "tags": ["py3-none-any"], "files": [], "metadata": md});
            let e = format!(
                "{:#}",
                render_metadata(&Manifest::from_json(&json.to_string()).unwrap()).unwrap_err()
            );
            assert!(e.contains(want), "{want:?} not in: {e}");
        };
        bad(
            serde_json::json!({"project_urls": [["Home", "example.org"]]}),
            "is not a URL",
        );
        bad(
            serde_json::json!({"project_urls": [["A label that is far too long for PyPI", "https://x"]]}),
            "at most 32",
        );
        bad(serde_json::json!({"keywords": ["a,b"]}), "contains a comma");
        bad(
            serde_json::json!({"classifiers": ["Bad ::  x"]}),
            "malformed",
        );
        bad(
            serde_json::json!({"description": {"src": "/nonexistent/README.md"}}),
            "description file",
        );
        bad(
            serde_json::json!({"description": {"src": "x", "content_type": "text/html"}}),
            "text/html",
        );
        bad(serde_json::json!({"author": ""}), "is empty");
        bad(
            serde_json::json!({"requires_dist": ["numpy>=1.26; python_version >= 3.12"]}),
            "invalid requirement",
        );
    }

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

    #[test]
    fn content_types() {
        for ok in [
            "text/markdown",
            "text/markdown; charset=UTF-8; variant=GFM",
            "text/x-rst",
            "text/plain",
        ] {
            validate_content_type(ok).unwrap();
        }
        for bad in [
            "text/html",
            "text/plain; variant=GFM",
            "text/markdown; charset=latin-1",
            "text/markdown; x",
        ] {
            assert!(validate_content_type(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entry_points_sorted_and_validated() {
        let mut eps = BTreeMap::new();
        eps.insert(
            "z".to_string(),
            BTreeMap::from([
                ("b".to_string(), "m:f".to_string()),
                ("a".to_string(), "m.n".to_string()),
            ]),
        );
        eps.insert(
            "console_scripts".to_string(),
            BTreeMap::from([("tool".to_string(), "pkg.cli:main".to_string())]),
        );
        let s = render_entry_points(&eps).unwrap().unwrap();
        assert_eq!(
            s,
            "[console_scripts]\ntool = pkg.cli:main\n\n[z]\na = m.n\nb = m:f\n\n"
        );
        for bad in ["", "1mod", "m:", "m:a b", "a..b"] {
            let eps = BTreeMap::from([(
                "g".to_string(),
                BTreeMap::from([("n".to_string(), bad.to_string())]),
            )]);
            assert!(render_entry_points(&eps).is_err(), "{bad:?}");
        }
        let eps = BTreeMap::from([(
            "g".to_string(),
            BTreeMap::from([("a=b".to_string(), "m".to_string())]),
        )]);
        assert!(render_entry_points(&eps).is_err());
        assert!(render_entry_points(&BTreeMap::new()).unwrap().is_none());
    }

    #[test]
    fn wheel_file() {
        let tags = wheel_format::parse_tags(&["py2.py3-none-any".into()])
            .unwrap()
            .0;
        assert_eq!(
            render_wheel(true, &tags),
            format!("Wheel-Version: 1.0\nGenerator: rocm-wheel {}\nRoot-Is-Purelib: true\nTag: py2-none-any\nTag: py3-none-any\n", env!("CARGO_PKG_VERSION"))
        );
    }
}
