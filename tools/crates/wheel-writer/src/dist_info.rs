//! The generated `.dist-info` text of a manifest: METADATA from its
//! `metadata` object (the fields checked and rendered by wheel-format), the
//! description read from its file.

use anyhow::{Context, Result};
use wheel_format::CoreMetadata;

use crate::manifest::Manifest;

/// WHEEL's `Generator`.
pub const GENERATOR: &str = concat!("rocm-wheel ", env!("CARGO_PKG_VERSION"));

/// METADATA: the manifest's fields in core metadata's fixed order, then
/// the description as the message body.
pub(crate) fn metadata(m: &Manifest) -> Result<String> {
    let md = &m.metadata;
    let core = CoreMetadata {
        name: m.distribution.clone(),
        version: m.version.clone(),
        summary: md.summary.clone(),
        project_urls: md.project_urls.clone(),
        author: md.author.clone(),
        author_email: md.author_email.clone(),
        maintainer: md.maintainer.clone(),
        maintainer_email: md.maintainer_email.clone(),
        license_expression: md.license_expression.clone(),
        license_files: md.license_files.iter().map(|f| f.path.clone()).collect(),
        keywords: md.keywords.clone(),
        classifiers: md.classifiers.clone(),
        requires_python: md.requires_python.clone(),
        requires_dist: md.requires_dist.clone(),
        provides_extra: md.provides_extra.clone(),
        description_content_type: md.description.as_ref().map(|d| {
            d.content_type
                .clone()
                .unwrap_or_else(|| "text/plain".to_string())
        }),
    };
    let headers = wheel_format::render_metadata(&core)?;
    Ok(match &md.description {
        Some(d) => wheel_format::append_description(headers, &read_description(&d.src)?),
        None => headers,
    })
}

fn read_description(src: &str) -> Result<String> {
    let body = std::fs::read(src).with_context(|| {
        format!("description file {src:?} does not exist or cannot be read; check metadata.description.src")
    })?;
    String::from_utf8(body)
        .map_err(|_| anyhow::anyhow!("description file {src:?} is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every manifest field reaches its header (their order and checks are
    /// wheel-format's), the description its body.
    #[test]
    fn manifest_fields_become_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let readme = dir.path().join("README.md");
        std::fs::write(&readme, "# Title\n\nBody, no trailing newline").unwrap();
        let json = serde_json::json!({
            "distribution": "Jax-ROCm7-Plugin", "version": "0.7.1", "tags": ["py3-none-any"], "files": [],
            "metadata": {
                "description": {"src": readme},
                "provides_extra": ["test"], "requires_dist": ["b; extra == 'test'"],
                "requires_python": ">=3.10", "classifiers": ["Programming Language :: Python :: 3"],
                "keywords": ["jax", "rocm"], "license_expression": "Apache-2.0",
                "license_files": [{"path": "sub/NOTICE", "src": "y"}],
                "maintainer_email": "m@x", "maintainer": "M", "author_email": "a@x", "author": "A",
                "project_urls": [["Source", "https://s.example"]], "summary": "S"
            }
        });
        let text = metadata(&Manifest::from_json(&json.to_string()).unwrap()).unwrap();
        for line in [
            "Name: Jax-ROCm7-Plugin",
            "Version: 0.7.1",
            "Summary: S",
            "Project-URL: Source, https://s.example",
            "Author: A",
            "Author-email: a@x",
            "Maintainer: M",
            "Maintainer-email: m@x",
            "License-Expression: Apache-2.0",
            "License-File: sub/NOTICE",
            "Keywords: jax,rocm",
            "Classifier: Programming Language :: Python :: 3",
            "Requires-Python: >=3.10",
            "Requires-Dist: b; extra == 'test'",
            "Provides-Extra: test",
            "Description-Content-Type: text/plain",
        ] {
            assert!(
                text.contains(&format!("\n{line}\n")),
                "{line:?} not in:\n{text}"
            );
        }
        assert!(
            text.ends_with("\n\n# Title\n\nBody, no trailing newline\n"),
            "{text}"
        );
    }

    #[test]
    fn description_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let latin1 = dir.path().join("README.txt");
        std::fs::write(&latin1, b"caf\xe9\n").unwrap();
        for (src, want) in [
            (
                "/nonexistent/README.md".into(),
                "description file \"/nonexistent/README.md\" does not exist",
            ),
            (latin1.display().to_string(), "is not UTF-8 text"),
        ] {
            let json = serde_json::json!({
                "distribution": "a", "version": "1", "tags": ["py3-none-any"], "files": [],
                "metadata": {"description": {"src": src}}
            });
            let m = Manifest::from_json(&json.to_string()).unwrap();
            let e = format!("{:#}", metadata(&m).unwrap_err());
            assert!(e.contains(want), "{want:?} not in: {e}");
        }
    }
}
