//! The index pages: PEP 503 HTML (repository version 1.1, PEP 629 / PEP
//! 700) and the PEP 691 JSON form of the same data, `index.html` and
//! `index.json` in each directory. pip reads the HTML (it asks a file://
//! index for `index.html`); a server that negotiates content types serves
//! the JSON for `application/vnd.pypi.simple.v1+json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use crate::File;

const API_VERSION: &str = "1.1";

/// Writes the root pages and every project's pages under `dir`.
pub(crate) fn write_pages(dir: &Path, projects: &BTreeMap<String, Vec<File>>) -> Result<()> {
    for (project, files) in projects {
        let d = dir.join(project);
        write(&d.join("index.html"), &project_html(project, files))?;
        write(&d.join("index.json"), &project_json(project, files))?;
    }
    write(&dir.join("index.html"), &root_html(projects.keys()))?;
    write(&dir.join("index.json"), &root_json(projects.keys()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n  <head>\n    \
         <meta name=\"pypi:repository-version\" content=\"{API_VERSION}\">\n    \
         <title>{title}</title>\n  </head>\n  <body>\n{body}  </body>\n</html>\n"
    )
}

fn root_html<'a>(projects: impl Iterator<Item = &'a String>) -> String {
    let links: String = projects
        .map(|p| format!("    <a href=\"{}/\">{}</a>\n", url_path(p), escape(p)))
        .collect();
    page("Simple index", &links)
}

fn project_html(project: &str, files: &[File]) -> String {
    let mut body = format!("    <h1>Links for {}</h1>\n", escape(project));
    for f in files {
        let mut attrs = String::new();
        if let Some(rp) = &f.requires_python {
            attrs.push_str(&format!(" data-requires-python=\"{}\"", escape(rp)));
        }
        // Both spellings: PEP 714 renamed the attribute, and older pips
        // read only the first.
        if let Some(m) = &f.metadata_sha256 {
            let meta = format!("sha256={m}");
            attrs.push_str(&format!(
                " data-dist-info-metadata=\"{meta}\" data-core-metadata=\"{meta}\""
            ));
        }
        body.push_str(&format!(
            "    <a href=\"{}#sha256={}\"{attrs}>{}</a><br>\n",
            url_path(&f.file_name),
            f.sha256,
            escape(&f.file_name)
        ));
    }
    page(&format!("Links for {}", escape(project)), &body)
}

fn root_json<'a>(projects: impl Iterator<Item = &'a String>) -> String {
    let projects: Vec<_> = projects.map(|p| json!({ "name": p })).collect();
    to_json(&json!({ "meta": { "api-version": API_VERSION }, "projects": projects }))
}

fn project_json(project: &str, files: &[File]) -> String {
    let versions: BTreeSet<&str> = files.iter().map(|f| f.version.as_str()).collect();
    let files: Vec<_> = files
        .iter()
        .map(|f| {
            let mut o = json!({
                "filename": f.file_name,
                "url": url_path(&f.file_name),
                "hashes": { "sha256": f.sha256 },
                "size": f.size,
            });
            if let Some(m) = &f.metadata_sha256 {
                o["core-metadata"] = json!({ "sha256": m });
                o["dist-info-metadata"] = json!({ "sha256": m });
            }
            if let Some(rp) = &f.requires_python {
                o["requires-python"] = json!(rp);
            }
            o
        })
        .collect();
    to_json(&json!({
        "meta": { "api-version": API_VERSION },
        "name": project,
        "versions": versions,
        "files": files,
    }))
}

fn to_json(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("a JSON value always serialises");
    s.push('\n');
    s
}

/// HTML text and attribute escaping.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// A relative URL path for a file or project name: everything but RFC
/// 3986's unreserved characters percent-encoded (a local version's `+`
/// included, as PyPI writes it; pip decodes it back).
fn url_path(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, rp: Option<&str>) -> File {
        File {
            file_name: name.into(),
            version: "1.0+rocm".into(),
            requires_python: rp.map(str::to_string),
            sha256: "ab".repeat(32),
            size: 7,
            metadata_sha256: Some("cd".repeat(32)),
        }
    }

    #[test]
    fn pages_escape_and_encode() {
        let files = [file("a_b-1.0+rocm-py3-none-any.whl", Some(">=3.10,<4"))];
        let html = project_html("a-b", &files);
        assert!(
            html.contains(&format!(
                "<a href=\"a_b-1.0%2Brocm-py3-none-any.whl#sha256={}\" \
                 data-requires-python=\"&gt;=3.10,&lt;4\" data-dist-info-metadata=\"sha256={m}\" \
                 data-core-metadata=\"sha256={m}\">a_b-1.0+rocm-py3-none-any.whl</a><br>",
                "ab".repeat(32),
                m = "cd".repeat(32)
            )),
            "{html}"
        );
        assert!(html.contains("<meta name=\"pypi:repository-version\" content=\"1.1\">"));
        let j: serde_json::Value = serde_json::from_str(&project_json("a-b", &files)).unwrap();
        assert_eq!(j["name"], "a-b");
        assert_eq!(j["versions"], json!(["1.0+rocm"]));
        assert_eq!(j["files"][0]["requires-python"], ">=3.10,<4");
        assert_eq!(j["files"][0]["url"], "a_b-1.0%2Brocm-py3-none-any.whl");
        assert_eq!(j["files"][0]["size"], 7);
        let j = project_json("a-b", &[file("a_b-1.0-py3-none-any.whl", None)]);
        assert!(!j.contains("requires-python"), "{j}");
        let names = ["a-b".to_string()];
        assert!(root_html(names.iter()).contains("<a href=\"a-b/\">a-b</a>"));
    }
}
