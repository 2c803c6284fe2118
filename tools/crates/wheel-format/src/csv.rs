//! The CSV dialect of RECORD (Python's `csv` module defaults): fields split
//! at `,`; a field holding a comma or a quote is quoted, quotes doubled.
//! Paths may contain both, so RECORD cannot be split at commas.
//! Hand-written rather than the `csv` crate: one fixed dialect over fields
//! that cannot hold control characters (member names refuse them), in 40
//! lines; `python_csv_agrees` holds it to Python's `csv`, which pip reads
//! RECORD with.

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

    /// Every field of up to three characters over `a`, `,`, `"` and a space,
    /// in rows of three: Python's `csv.writer` (pip's wheel installer writes
    /// RECORD with it) spells each row as we do, and we split its rows back
    /// into the same fields.
    #[test]
    fn python_csv_agrees() {
        let alphabet = ['a', ',', '"', ' '];
        let mut fields = vec![String::new()];
        for len in 1..=3u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut k = n;
                let mut f = String::new();
                for _ in 0..len {
                    f.push(alphabet[k % alphabet.len()]);
                    k /= alphabet.len();
                }
                fields.push(f);
            }
        }
        let rows: Vec<Vec<String>> = fields
            .iter()
            .map(|f| vec![f.clone(), "sha256=x".into(), f.clone()])
            .collect();
        let py = r#"
import csv, io, json, sys
out = []
for row in json.load(sys.stdin):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(row)
    out.append(buf.getvalue()[:-1])
json.dump(out, sys.stdout)
"#;
        let out = test_support::venv_python::<&str>(py, &[], &serde_json::to_vec(&rows).unwrap());
        let lines: Vec<String> = serde_json::from_slice(&out).unwrap();
        for (row, line) in rows.iter().zip(&lines) {
            let ours: Vec<String> = row.iter().map(|f| quote_field(f)).collect();
            assert_eq!(&ours.join(","), line, "csv.writer spells {row:?} otherwise");
            assert_eq!(
                &split_fields(line).unwrap(),
                row,
                "we split {line:?} otherwise"
            );
        }
    }
}
