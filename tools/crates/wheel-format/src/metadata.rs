//! The email-header files of a `.dist-info` (METADATA, WHEEL): `Key: value`
//! lines up to the first blank line (METADATA's description follows it),
//! keys compared case-insensitively as email headers are. Also the wheel's
//! identity (METADATA's Name and Version against the file and directory
//! names) and renaming a distribution in METADATA.

use anyhow::{bail, Context, Result};

use crate::names::normalize_name;
use crate::wheel_name::WheelName;

/// The header lines of `text` (line endings kept): those before the first
/// blank line.
fn header_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
        .take_while(|l| !l.trim_end_matches(['\r', '\n']).is_empty())
}

/// `(key, value)` of one header line, both trimmed; `None` for a line
/// without a colon.
fn split_header(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    Some((k.trim(), v.trim()))
}

/// The headers of a METADATA or WHEEL file, in file order. Lines without a
/// colon are skipped: readers describe what they can, and what they need
/// is checked with [`Headers::require`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headers<'a> {
    /// The file the headers come from, for messages (`METADATA`, `WHEEL`).
    file: &'a str,
    fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Headers<'a> {
    /// Parses the header block of `text`, the content of `file`.
    pub fn parse(file: &'a str, text: &'a str) -> Headers<'a> {
        Headers {
            file,
            fields: header_lines(text).filter_map(split_header).collect(),
        }
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.get_all(key).next()
    }

    /// Every value of a multiple-use `key` (`Tag`, `Classifier`), in order.
    pub fn get_all<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'a str> + 's {
        self.fields
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }

    /// The first value of `key`, which the file must have.
    pub fn require(&self, key: &str) -> Result<&'a str> {
        self.get(key)
            .with_context(|| format!("{} has no {key} field", self.file))
    }
}

/// Name and version from METADATA, checked against the wheel's file name
/// and its `.dist-info` stem `dist` (`check`, `inspect` and `thin` agree on
/// this: pip refuses a wheel whose names disagree).
pub fn wheel_identity(filename: &str, dist: &str, metadata: &str) -> Result<(String, String)> {
    let metadata = Headers::parse("METADATA", metadata);
    let WheelName {
        name: fname_name,
        version: fname_version,
        ..
    } = WheelName::parse(filename)?;
    let name = metadata.require("Name")?.to_string();
    let version = metadata.require("Version")?.to_string();
    // File names spell `-` in versions as `_` (PEP 427 escaping).
    if normalize_name(fname_name) != normalize_name(&name)
        || fname_version != version.replace('-', "_")
    {
        bail!(
            "file name says {fname_name} {fname_version} but METADATA says {name} {version}; \
             rename the file or fix METADATA"
        );
    }
    if normalize_name(dist) != normalize_name(&format!("{name}-{version}")) {
        bail!(
            "dist-info directory `{dist}.dist-info` does not match {name} {version} from METADATA; \
             it must be `{}-{version}.dist-info`",
            normalize_name(&name)
        );
    }
    Ok((name, version))
}

/// METADATA `text` with its `Name:` header replaced by `new_name`; the
/// rest, the description included, byte for byte as it was.
pub fn rename_metadata(text: &str, new_name: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut headers_len = 0;
    let mut done = false;
    for line in header_lines(text) {
        headers_len += line.len();
        let is_name = split_header(line).is_some_and(|(k, _)| k.eq_ignore_ascii_case("Name"));
        if is_name && !done {
            out.push_str(&format!("Name: {new_name}\n"));
            done = true;
        } else {
            out.push_str(line);
        }
    }
    if !done {
        bail!("METADATA has no Name field");
    }
    out.push_str(&text[headers_len..]);
    Ok(out)
}

/// Largest text member (WHEEL, METADATA, RECORD) read into memory.
pub const MAX_TEXT_MEMBER: u64 = 64 << 20;

/// Reads the text member `member` from `r` (its decompressed bytes),
/// refusing more than [`MAX_TEXT_MEMBER`] bytes (whatever its header
/// claims) so a bomb cannot fill memory.
pub fn read_text_member(member: &str, r: impl std::io::Read) -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    r.take(MAX_TEXT_MEMBER + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {member}: the zip entry is corrupt"))?;
    if bytes.len() as u64 > MAX_TEXT_MEMBER {
        bail!(
            "{member} is larger than {} MiB; that is not a real wheel metadata file",
            MAX_TEXT_MEMBER >> 20
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{member} is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_stop_at_the_body() {
        let text = "Metadata-Version: 2.1\nname: demo\nClassifier: A\nbroken line\n\
                    classifier : B\n\nName: in body\n";
        let h = Headers::parse("METADATA", text);
        assert_eq!(h.get("Name"), Some("demo"));
        assert_eq!(h.get_all("Classifier").collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(h.get("Version"), None);
        let e = h.require("Version").unwrap_err().to_string();
        assert_eq!(e, "METADATA has no Version field");
        let h = Headers::parse("WHEEL", "Tag: a-b-c\r\nTag: d-e-f\r\n\r\nTag: body\r\n");
        assert_eq!(h.get_all("tag").collect::<Vec<_>>(), ["a-b-c", "d-e-f"]);
    }

    #[test]
    fn identity_is_checked_against_both_names() {
        let m = "Metadata-Version: 2.1\nName: Jax.ROCm7-pjrt\nVersion: 1.0-1\n";
        let f = "jax_rocm7_pjrt-1.0_1-py3-none-any.whl";
        let (n, v) = wheel_identity(f, "jax_rocm7_pjrt-1.0_1", m).unwrap();
        assert_eq!((n.as_str(), v.as_str()), ("Jax.ROCm7-pjrt", "1.0-1"));
        let e = wheel_identity("other-1.0_1-py3-none-any.whl", "x", m).unwrap_err();
        assert!(
            e.to_string()
                .contains("file name says other 1.0_1 but METADATA says"),
            "{e}"
        );
        let e = wheel_identity(f, "jax_rocm7_pjrt-2", m)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("it must be `jax_rocm7_pjrt-1.0-1.dist-info`"),
            "{e}"
        );
        for (bad, want) in [
            ("Version: 1\n", "METADATA has no Name field"),
            ("Name: x\n", "METADATA has no Version field"),
            ("\nName: x\nVersion: 1\n", "METADATA has no Name field"),
            ("Name x\nVersion 1\n", "METADATA has no Name field"),
        ] {
            let e = wheel_identity("x-1-py3-none-any.whl", "x-1", bad).unwrap_err();
            assert_eq!(e.to_string(), want, "{bad:?}");
        }
        let e = wheel_identity("x.whl", "x-1", m).unwrap_err().to_string();
        assert!(e.contains("not a wheel file name"), "{e}");
    }

    #[test]
    fn rename_keeps_everything_else() {
        let m =
            "Metadata-Version: 2.1\r\nName: jax-rocm7-pjrt\r\nVersion: 1\r\n\r\nName: in body\n";
        assert_eq!(
            rename_metadata(m, "jax-rocm7-pjrt-gfx120X-all").unwrap(),
            "Metadata-Version: 2.1\r\nName: jax-rocm7-pjrt-gfx120X-all\nVersion: 1\r\n\r\nName: in body\n"
        );
        let m = "Metadata-Version: 2.1\nName: jax-rocm7-pjrt\nVersion: 1\n\nName: in body\n";
        assert_eq!(
            rename_metadata(m, "jax-rocm7-pjrt-gfx120X-all").unwrap(),
            "Metadata-Version: 2.1\nName: jax-rocm7-pjrt-gfx120X-all\nVersion: 1\n\nName: in body\n"
        );
        // A multibyte character where `Name:` would end must not panic.
        for bad in ["Versión: 1\n\nName: body\n", "Nämé: x\n", ""] {
            let e = rename_metadata(bad, "y").unwrap_err().to_string();
            assert_eq!(e, "METADATA has no Name field", "{bad:?}");
        }
    }
}
