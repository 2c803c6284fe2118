//! `*.dist-info/WHEEL`: the wheel format version, the generator, whether
//! the root installs to purelib, and the tags.

use anyhow::{bail, Result};

use crate::metadata::Headers;

/// The fields of a WHEEL file, as written (parsing never fails, so `check`
/// can report what is missing as findings; [`WheelFile::check`] is what a
/// reader that needs a usable wheel requires).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WheelFile {
    pub wheel_version: Option<String>,
    pub generator: Option<String>,
    /// `Root-Is-Purelib`: `true` (any case) or not; `None` when absent.
    pub root_is_purelib: Option<bool>,
    pub build: Option<String>,
    /// The `Tag` lines, in order.
    pub tags: Vec<String>,
}

impl WheelFile {
    /// Reads the header block of a WHEEL file's `text`.
    pub fn parse(text: &str) -> WheelFile {
        let h = Headers::parse("WHEEL", text);
        let owned = |k: &str| h.get(k).map(str::to_string);
        WheelFile {
            wheel_version: owned("Wheel-Version"),
            generator: owned("Generator"),
            root_is_purelib: h
                .get("Root-Is-Purelib")
                .map(|v| v.eq_ignore_ascii_case("true")),
            build: owned("Build"),
            tags: h.get_all("Tag").map(str::to_string).collect(),
        }
    }

    /// Errors unless the wheel has a supported `Wheel-Version` (1.x: what
    /// installers read) and at least one `Tag`; returns the version.
    pub fn check(&self) -> Result<&str> {
        let Some(version) = self.wheel_version.as_deref() else {
            bail!("WHEEL has no Wheel-Version field");
        };
        if !version.starts_with("1.") {
            bail!("Wheel-Version {version} is not supported (only 1.x wheels are defined)");
        }
        if self.tags.is_empty() {
            bail!("WHEEL has no Tag field");
        }
        Ok(version)
    }

    /// The platform parts of the `Tag` lines, each compressed set expanded
    /// (`manylinux_2_17_x86_64.manylinux2014_x86_64`), without repeats.
    pub fn platform_tags(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for tag in &self.tags {
            let Some(plats) = tag.rsplit('-').next() else {
                continue;
            };
            for plat in plats.split('.') {
                if !out.iter().any(|t| t == plat) {
                    out.push(plat.to_string());
                }
            }
        }
        out
    }
}

/// WHEEL `text` with the header `key` set to `value` (where it was, else
/// at the end of the headers); every other line as it was.
pub fn set_wheel_field(text: &str, key: &str, value: &str) -> String {
    replace_headers(text, key, &format!("{key}: {value}\n"))
}

/// WHEEL `text` with its `Tag` headers replaced by `tags` (where the first
/// one was, or at the end of the headers); every other line as it was.
pub fn retag_wheel_file(text: &str, tags: &[String]) -> String {
    let new_tags: String = tags.iter().map(|t| format!("Tag: {t}\n")).collect();
    replace_headers(text, "Tag", &new_tags)
}

/// `text` with every header line named `key` replaced by `lines` (where
/// the first was, else at the end of the headers).
fn replace_headers(text: &str, key: &str, lines: &str) -> String {
    let mut out = String::with_capacity(text.len() + lines.len());
    let mut placed = false;
    let mut rest = text;
    while let Some(line) = rest.split_inclusive('\n').next() {
        if line.trim_end_matches(['\r', '\n']).is_empty() {
            break;
        }
        rest = &rest[line.len()..];
        let is_key = line
            .split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(key));
        if !is_key {
            out.push_str(line);
        } else if !placed {
            out.push_str(lines);
            placed = true;
        }
    }
    if !placed {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(lines);
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_a_field_in_place_or_at_the_end() {
        let w = "Wheel-Version: 1.0\nroot-is-purelib: true\nTag: py3-none-any\n\nbody\n";
        assert_eq!(
            set_wheel_field(w, "Root-Is-Purelib", "false"),
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n\nbody\n"
        );
        assert_eq!(
            set_wheel_field("Wheel-Version: 1.0", "Root-Is-Purelib", "false"),
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
        );
    }

    #[test]
    fn fields() {
        let w = WheelFile::parse(
            "Wheel-Version: 1.0\nGenerator: g 1\nroot-is-purelib: True\nBuild: 7\n\
             Tag: cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64\n\
             Tag: cp313-cp313-manylinux_2_17_x86_64\n",
        );
        assert_eq!(w.check().unwrap(), "1.0");
        assert_eq!(w.generator.as_deref(), Some("g 1"));
        assert_eq!(w.root_is_purelib, Some(true));
        assert_eq!(w.build.as_deref(), Some("7"));
        assert_eq!(w.tags.len(), 2);
        assert_eq!(
            w.platform_tags(),
            ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]
        );
        let w = WheelFile::parse("Root-Is-Purelib: false\n");
        assert_eq!(w.root_is_purelib, Some(false));
        assert_eq!(WheelFile::parse("").root_is_purelib, None);
    }

    #[test]
    fn retagging_keeps_the_other_lines() {
        let text = "Wheel-Version: 1.0\nTag: py3-none-any\nRoot-Is-Purelib: true\n\
                    tag: py2-none-any\n\nTag: body\n";
        let tags = ["py3-none-manylinux_2_28_x86_64".to_string()];
        assert_eq!(
            retag_wheel_file(text, &tags),
            "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_28_x86_64\n\
             Root-Is-Purelib: true\n\nTag: body\n"
        );
        assert_eq!(
            retag_wheel_file("Wheel-Version: 1.0", &tags),
            "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_28_x86_64\n"
        );
    }

    #[test]
    fn malformed_wheel_files() {
        for (text, want) in [
            ("", "WHEEL has no Wheel-Version field"),
            ("Tag: py3-none-any\n", "WHEEL has no Wheel-Version field"),
            (
                "\nWheel-Version: 1.0\nTag: py3-none-any\n",
                "WHEEL has no Wheel-Version field",
            ),
            (
                "Wheel-Version: 2.0\nTag: py3-none-any\n",
                "Wheel-Version 2.0 is not supported",
            ),
            ("Wheel-Version: 1.0\n", "WHEEL has no Tag field"),
            (
                "Wheel-Version: 1.0\nTag py3-none-any\n",
                "WHEEL has no Tag field",
            ),
        ] {
            let e = WheelFile::parse(text).check().unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
