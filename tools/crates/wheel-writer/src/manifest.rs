//! The JSON manifest written by the Starlark rule (`json.encode`). Unknown
//! keys are errors so that typos in Starlark surface at build time.

use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub distribution: String,
    pub version: String,
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub root_is_purelib: Option<bool>,
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Metadata,
    #[serde(default, deserialize_with = "null_default")]
    pub entry_points: BTreeMap<String, BTreeMap<String, String>>,
    pub files: Vec<FileEntry>,
    /// Asks for `Requires-Dist` on TheRock's pip SDK, from what the files
    /// need. The writer does not look at it: the caller computes them
    /// (`rocm_layout::sdk_requirements`) and adds them
    /// ([`Manifest::add_requirements`]).
    #[serde(default)]
    pub rocm_sdk: Option<RocmSdk>,
}

/// The manifest's `rocm_sdk` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmSdk {
    /// The extra the requirements are under (`rocm`).
    pub extra: String,
    /// The toolkit's ROCm version, `major.minor` (`7.2`).
    pub version: String,
    /// TheRock gfx families of the build (`gfx120X-all`).
    pub families: Vec<String>,
    /// The TheRock SDK release the toolkit is (`7.13.0a20261201`), if it
    /// is one: the requirements then pin it exactly.
    #[serde(default)]
    pub sdk_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    pub summary: Option<String>,
    pub requires_python: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub requires_dist: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub provides_extra: Vec<String>,
    pub license_expression: Option<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub license_files: Vec<FileEntry>,
    #[serde(default, deserialize_with = "null_default")]
    pub project_urls: Vec<(String, String)>,
    #[serde(default, deserialize_with = "null_default")]
    pub classifiers: Vec<String>,
    #[serde(default, deserialize_with = "null_default")]
    pub keywords: Vec<String>,
    pub author: Option<String>,
    pub author_email: Option<String>,
    pub maintainer: Option<String>,
    pub maintainer_email: Option<String>,
    pub description: Option<Description>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    pub src: String,
    pub content_type: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Path inside the wheel (for license files: inside `.dist-info/licenses/`).
    pub path: String,
    /// Source file, relative to the current directory (the Bazel execroot).
    pub src: String,
}

/// Starlark's `json.encode(None)` is `null`; treat it like an absent key.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl Manifest {
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).context("invalid wheel manifest (see the manifest format in tools/crates/wheel-writer/src/manifest.rs)")
    }

    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the manifest {}", path.display()))?;
        Self::from_json(&text).with_context(|| format!("in {}", path.display()))
    }

    /// Adds requirements the caller computed, under `extra`, which the
    /// wheel then provides (declared once).
    pub fn add_requirements(&mut self, extra: &str, requires_dist: Vec<String>) {
        self.metadata.requires_dist.extend(requires_dist);
        if !self.metadata.provides_extra.iter().any(|e| e == extra) {
            self.metadata.provides_extra.push(extra.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_rejected() {
        let e = format!(
            "{:#}",
            Manifest::from_json(r#"{"distribution":"a","version":"1","tags":["py3-none-any"],"files":[],"metadata":{"sumary":"x"}}"#)
                .unwrap_err()
        );
        assert!(e.contains("unknown field `sumary`"), "{e}");
        let e = format!(
            "{:#}",
            Manifest::from_json(r#"{"distribution":"a","version":"1","tags":["py3-none-any"],"files":[{"path":"a","src":"b","mode":1}]}"#)
                .unwrap_err()
        );
        assert!(e.contains("unknown field `mode`"), "{e}");
    }

    #[test]
    fn nulls_are_absent() {
        let m = Manifest::from_json(
            r#"{"distribution":"a","version":"1","tags":["py3-none-any"],"files":[],"root_is_purelib":null,
                "entry_points":null,"metadata":{"requires_dist":null,"summary":null,"description":null}}"#,
        )
        .unwrap();
        assert!(m.metadata.requires_dist.is_empty() && m.entry_points.is_empty());
    }

    #[test]
    fn required_keys() {
        let e = format!(
            "{:#}",
            Manifest::from_json(r#"{"distribution":"a","version":"1","tags":[]}"#).unwrap_err()
        );
        assert!(e.contains("missing field `files`"), "{e}");
    }

    #[test]
    fn added_requirements_declare_their_extra_once() {
        let mut m = Manifest::from_json(
            r#"{"distribution":"a","version":"1","tags":["py3-none-any"],"files":[],
                "metadata":{"requires_dist":["b"],"provides_extra":["test"]},
                "rocm_sdk":{"extra":"rocm","version":"7.2","families":["gfx120X-all"]}}"#,
        )
        .unwrap();
        assert_eq!(m.rocm_sdk.as_ref().unwrap().families, ["gfx120X-all"]);
        m.add_requirements("rocm", vec!["c; extra == \"rocm\"".into()]);
        m.add_requirements("rocm", Vec::new());
        assert_eq!(m.metadata.requires_dist, ["b", "c; extra == \"rocm\""]);
        assert_eq!(m.metadata.provides_extra, ["test", "rocm"]);
    }

    #[test]
    fn full_example_parses() {
        let m = Manifest::from_json(
            r#"{
  "distribution": "jax-rocm7-plugin", "version": "0.7.1", "tags": ["py3-none-any"],
  "root_is_purelib": null,
  "metadata": {
    "summary": "s", "requires_python": ">=3.10",
    "requires_dist": ["jax-rocm7-pjrt==0.7.1"], "provides_extra": ["test"],
    "license_expression": "Apache-2.0",
    "license_files": [{"path": "LICENSE.txt", "src": "x/LICENSE.txt"}],
    "project_urls": [["Homepage", "https://example.org"]],
    "classifiers": ["c"], "keywords": ["jax", "rocm"],
    "author": "a", "author_email": "a@b", "maintainer": "m", "maintainer_email": "m@b",
    "description": {"src": "README.md", "content_type": "text/markdown"}
  },
  "entry_points": {"jax_plugins": {"xla_rocm7": "jax_plugins.xla_rocm7"}},
  "files": [{"path": "a/__init__.py", "src": "b"}]
}"#,
        )
        .unwrap();
        assert_eq!(m.root_is_purelib, None);
        assert_eq!(m.metadata.project_urls[0].1, "https://example.org");
        assert_eq!(
            m.entry_points["jax_plugins"]["xla_rocm7"],
            "jax_plugins.xla_rocm7"
        );
    }
}
