//! The CSV dialect of RECORD (Python's `csv` module defaults): fields split
//! at `,`; a field holding a comma or a quote is quoted, quotes doubled.
//! Paths may contain both, so RECORD cannot be split at commas.

use anyhow::{bail, Result};

/// Splits one CSV line into its fields, unquoting them.
pub(crate) fn split_fields(line: &str) -> Result<Vec<String>> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    if quoted {
        bail!("unterminated quote");
    }
    fields.push(cur);
    Ok(fields)
}

/// One field as Python's `csv.writer` writes it: quoted only if it holds a
/// comma or a quote.
pub(crate) fn quote_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(split_fields("a,b,c").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            split_fields("\"a,b\",sha256=x,3").unwrap(),
            ["a,b", "sha256=x", "3"]
        );
        assert_eq!(split_fields("\"a\"\"b\",,").unwrap(), ["a\"b", "", ""]);
        assert!(split_fields("\"a,b").is_err());
        for s in ["plain", "a,b", "say \"hi\"", "\"", ",", "\"a,\"\"b\""] {
            assert_eq!(split_fields(&quote_field(s)).unwrap(), [s], "{s}");
        }
        assert_eq!(quote_field("a,b"), "\"a,b\"");
        assert_eq!(quote_field("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_field("a/b.py"), "a/b.py");
    }
}
