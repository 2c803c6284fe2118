//! Writing METADATA (core metadata 2.4) for a new wheel, every field
//! checked: one line each, URLs, classifiers, PEP 508 requirements against
//! the declared extras, the SPDX license expression, the description's
//! content type.

use anyhow::{bail, Context, Result};
use std::fmt::Write as _;

use crate::license::validate_license_expression;
use crate::names::{canonical_name, validate_name};
use crate::pep508::{parse_requirement, validate_specifiers};

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

/// The fields [`render_metadata`] writes. Messages name them as the
/// `metadata` object of a `build` manifest does (`metadata.summary`).
#[derive(Debug, Default, Clone)]
pub struct CoreMetadata {
    pub name: String,
    pub version: String,
    pub summary: Option<String>,
    /// `(label, URL)` pairs.
    pub project_urls: Vec<(String, String)>,
    pub author: Option<String>,
    pub author_email: Option<String>,
    pub maintainer: Option<String>,
    pub maintainer_email: Option<String>,
    /// An SPDX expression ([`validate_license_expression`]).
    pub license_expression: Option<String>,
    /// Paths inside `.dist-info/licenses/`.
    pub license_files: Vec<String>,
    pub keywords: Vec<String>,
    pub classifiers: Vec<String>,
    pub requires_python: Option<String>,
    /// PEP 508 requirements; the extras their markers use must be in
    /// `provides_extra`.
    pub requires_dist: Vec<String>,
    /// Extras, each already normalised (core metadata 2.3+).
    pub provides_extra: Vec<String>,
    /// `Description-Content-Type` when the wheel has a description; its
    /// body follows the headers ([`append_description`]).
    pub description_content_type: Option<String>,
}

/// Renders METADATA's headers (core metadata 2.4) with fields in a fixed
/// order, one line per value of a multi-use field, each checked.
pub fn render_metadata(md: &CoreMetadata) -> Result<String> {
    let mut out = String::new();
    let mut h = |k: &str, v: &str| {
        let _ = writeln!(out, "{k}: {v}");
    };
    h("Metadata-Version", "2.4");
    h("Name", &md.name);
    h("Version", &md.version);
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
    for path in &md.license_files {
        h("License-File", path);
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
    if let Some(ct) = &md.description_content_type {
        validate_content_type(ct)?;
        h("Description-Content-Type", ct);
    }
    Ok(out)
}

/// METADATA: the headers [`render_metadata`] wrote, then the description
/// as the message body, ending with a newline.
pub fn append_description(mut metadata: String, body: &str) -> String {
    metadata.push('\n');
    metadata.push_str(body);
    if !body.ends_with('\n') {
        metadata.push('\n');
    }
    metadata
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

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metadata_fields_in_fixed_order() {
        let s = |v: &str| Some(v.to_string());
        let md = CoreMetadata {
            name: "Jax-ROCm7-Plugin".into(),
            version: "0.7.1".into(),
            summary: s("S"),
            project_urls: vec![
                ("Source".into(), "https://s.example".into()),
                ("Homepage".into(), "https://h.example".into()),
            ],
            author: s("A"),
            author_email: s("a@x"),
            maintainer: s("M"),
            maintainer_email: s("m@x"),
            license_expression: s("Apache-2.0"),
            license_files: strings(&["LICENSE", "sub/NOTICE"]),
            keywords: strings(&["jax", "rocm"]),
            classifiers: strings(&["Programming Language :: Python :: 3"]),
            requires_python: s(">=3.10"),
            requires_dist: strings(&["a==1", "b; extra == 'test'"]),
            provides_extra: strings(&["test", "gpu"]),
            description_content_type: s("text/markdown"),
        };
        let text = render_metadata(&md).unwrap();
        assert_eq!(
            append_description(text, "# Title\n\nBody, no trailing newline"),
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
        let bad = |edit: &dyn Fn(&mut CoreMetadata), want: &str| {
            let mut md = CoreMetadata {
                name: "a".into(),
                version: "1".into(),
                ..CoreMetadata::default()
            };
            edit(&mut md);
            let e = format!("{:#}", render_metadata(&md).unwrap_err());
            assert!(e.contains(want), "{want:?} not in: {e}");
        };
        bad(
            &|m| m.project_urls = vec![("Home".into(), "example.org".into())],
            "is not a URL",
        );
        bad(
            &|m| {
                m.project_urls = vec![(
                    "A label that is far too long for PyPI".into(),
                    "https://x".into(),
                )]
            },
            "at most 32",
        );
        bad(&|m| m.keywords = strings(&["a,b"]), "contains a comma");
        bad(&|m| m.classifiers = strings(&["Bad ::  x"]), "malformed");
        bad(
            &|m| m.description_content_type = Some("text/html".into()),
            "text/html",
        );
        bad(&|m| m.author = Some(String::new()), "is empty");
        bad(
            &|m| m.requires_dist = strings(&["numpy>=1.26; python_version >= 3.12"]),
            "invalid requirement",
        );
        bad(
            &|m| m.requires_dist = strings(&["x; extra == 'gpu'"]),
            "not in metadata.provides_extra",
        );
        bad(
            &|m| m.provides_extra = strings(&["Test_Extra"]),
            "use \"test-extra\"",
        );
        bad(
            &|m| {
                m.license_expression = Some("MIT".into());
                m.classifiers = strings(&["License :: OSI Approved :: MIT License"]);
            },
            "PEP 639 replaces license classifiers",
        );
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
}
