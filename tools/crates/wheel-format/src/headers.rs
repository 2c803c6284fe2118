//! The email-header block that METADATA and WHEEL start with: `Key: value`
//! lines up to the first blank line (METADATA's description follows it),
//! keys compared case-insensitively as email headers are; read, and
//! edited in place.

use anyhow::{Context, Result};

/// The header lines of `text` (line endings kept): those before the first
/// blank line.
pub(crate) fn header_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
        .take_while(|l| !l.trim_end_matches(['\r', '\n']).is_empty())
}

/// METADATA `text` with the header `lines` (each ending in a newline) added
/// at the end of its headers; the rest, the description included, as it was.
pub fn insert_headers(text: &str, lines: &str) -> String {
    let end: usize = header_lines(text).map(str::len).sum();
    let (head, body) = text.split_at(end);
    let sep = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{head}{sep}{lines}{body}")
}

/// `(key, value)` of one header line, both trimmed; `None` for a line
/// without a colon.
pub(crate) fn split_header(line: &str) -> Option<(&str, &str)> {
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

/// `text` with every header line named `key` replaced by `lines` (where
/// the first was, else at the end of the headers).
pub(crate) fn replace_headers(text: &str, key: &str, lines: &str) -> String {
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
}
