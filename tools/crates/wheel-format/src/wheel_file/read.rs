//! Reading `*.dist-info/WHEEL`: the wheel format version, the generator,
//! whether the root installs to purelib, and the tags.

use anyhow::{bail, Result};

use crate::headers::Headers;

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

#[cfg(test)]
mod tests {
    use super::*;

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
