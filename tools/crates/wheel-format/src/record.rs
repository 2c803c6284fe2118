//! `*.dist-info/RECORD`: one `path,hash,size` row per member, RECORD
//! itself (and its signatures) without hash and size. Read into rows,
//! written from rows, rewritten for changed members, and checked against
//! members while they stream (`inspect` and `check` reject the same corrupt
//! wheels with the same messages).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context, Result};

use crate::csv::{quote_field, split_fields};
use crate::hash::Digest;

/// One row of RECORD, fields unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRow {
    pub path: String,
    /// `sha256=<urlsafe b64>`; `None` for RECORD itself.
    pub hash: Option<String>,
    pub size: Option<u64>,
}

/// Parses `text`, the content of the member `record_name` (named in
/// errors), into its rows in file order; blank lines are skipped.
pub fn parse_record(record_name: &str, text: &str) -> Result<Vec<RecordRow>> {
    record_lines(record_name, text)
        .map(|r| r.map(|(_, row)| row))
        .collect()
}

/// The rows of `text` with their lines as written (line ending included).
fn record_lines<'t>(
    record_name: &'t str,
    text: &'t str,
) -> impl Iterator<Item = Result<(&'t str, RecordRow)>> + 't {
    text.split_inclusive('\n')
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(move |(i, line)| {
            let where_ = || format!("{record_name} line {}", i + 1);
            let row = parse_row(line.trim_end_matches('\n').trim_end_matches('\r'));
            Ok((line, row.with_context(where_)?))
        })
}

/// One `path,hash,size` line.
fn parse_row(line: &str) -> Result<RecordRow> {
    let f = split_fields(line)?;
    let [path, hash, size] = <[String; 3]>::try_from(f)
        .map_err(|_| anyhow::anyhow!("expected PATH,HASH,SIZE, got `{line}`"))?;
    let size = match size.as_str() {
        "" => None,
        s => Some(
            s.parse::<u64>()
                .with_context(|| format!("size `{s}` is not a number"))?,
        ),
    };
    Ok(RecordRow {
        path,
        hash: (!hash.is_empty()).then_some(hash),
        size,
    })
}

/// RECORD text built row by row, each row CSV-quoted as Python's `csv`
/// module writes it (the form pip and `wheel` read).
#[derive(Debug, Default)]
pub struct RecordWriter {
    text: String,
}

impl RecordWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a row.
    pub fn push(&mut self, row: &RecordRow) {
        let size = row.size.map(|s| s.to_string()).unwrap_or_default();
        let hash = row.hash.as_deref().unwrap_or_default();
        self.text.push_str(&format!(
            "{},{},{size}\n",
            quote_field(&row.path),
            quote_field(hash)
        ));
    }

    /// Appends the row of a member: its `sha256=` hash and size.
    pub fn hashed(&mut self, path: &str, hash: &str, size: u64) {
        self.push(&RecordRow {
            path: path.to_string(),
            hash: Some(hash.to_string()),
            size: Some(size),
        });
    }

    /// Appends the row of RECORD itself, which cannot hash itself: `path,,`.
    pub fn unhashed(&mut self, path: &str) {
        self.push(&RecordRow {
            path: path.to_string(),
            hash: None,
            size: None,
        });
    }

    /// Appends a line as it was read (a newline added if it has none).
    fn verbatim(&mut self, line: &str) {
        self.text.push_str(line);
        if !line.ends_with('\n') {
            self.text.push('\n');
        }
    }

    /// The RECORD text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// How a rewritten wheel's members differ from the input's, for
/// [`rewrite_record`].
pub struct RecordEdits<'a> {
    /// A member's new path (a renamed `.dist-info`), from its old one.
    pub rename: &'a dyn Fn(&str) -> String,
    /// New hash and size of the members whose bytes changed, keyed by new
    /// path; each must have a row.
    pub changed: &'a BTreeMap<String, (String, u64)>,
    /// Old paths of the members dropped; their rows go.
    pub removed: &'a BTreeSet<String>,
    /// Rows of new members, placed before RECORD's own row.
    pub added: &'a [RecordRow],
}

/// RECORD `text` (of member `record_name`) with every path passed through
/// `edits.rename`, the hash and size of the changed members replaced, the
/// removed members' rows dropped and the added ones inserted before
/// RECORD's row (or at the end). Every other row is written as it was
/// parsed. Errors if a changed member has no row: RECORD must list every
/// file.
pub fn rewrite_record(record_name: &str, text: &str, edits: &RecordEdits) -> Result<String> {
    let mut out = RecordWriter::new();
    let mut seen = 0;
    let mut added = Some(edits.added);
    for line in record_lines(record_name, text) {
        let (line, mut row) = line?;
        if edits.removed.contains(&row.path) {
            continue;
        }
        if row.path == record_name {
            for a in added.take().unwrap_or_default() {
                out.push(a);
            }
        }
        let path = (edits.rename)(&row.path);
        if let Some((hash, size)) = edits.changed.get(&path) {
            seen += 1;
            (row.path, row.hash, row.size) = (path, Some(hash.clone()), Some(*size));
            out.push(&row);
        } else if path != row.path {
            row.path = path;
            out.push(&row);
        } else {
            out.verbatim(line);
        }
    }
    for a in added.take().unwrap_or_default() {
        out.push(a);
    }
    if seen != edits.changed.len() {
        bail!(
            "{record_name} does not list every member this command changed; the input wheel is \
             not valid (RECORD must list every file)"
        );
    }
    Ok(out.finish())
}

/// The rows of a RECORD file not yet matched to a member.
#[derive(Debug)]
pub struct Record {
    name: String,
    rows: BTreeMap<String, Row>,
}

#[derive(Debug)]
struct Row {
    hash: Option<String>,
    size: Option<u64>,
}

/// What RECORD says about one member; check it with [`Expected::verify`].
#[derive(Debug)]
pub struct Expected {
    member: String,
    /// urlsafe base64 sha256, without padding.
    b64: String,
    size: Option<u64>,
}

impl Record {
    /// Parses `text`, the content of the member `record_name`
    /// (`path,sha256=<urlsafe b64>,size` per line).
    pub fn parse(record_name: &str, text: &str) -> Result<Record> {
        let rows = parse_record(record_name, text)?
            .into_iter()
            .map(|r| {
                (
                    r.path,
                    Row {
                        hash: r.hash,
                        size: r.size,
                    },
                )
            })
            .collect();
        Ok(Record {
            name: record_name.to_string(),
            rows,
        })
    }

    /// Claims the RECORD row of `member`. `None` for RECORD itself and its
    /// signatures, which RECORD cannot hash. Errors if the member has no
    /// row, or a row without a sha256.
    pub fn expect(&mut self, member: &str) -> Result<Option<Expected>> {
        let record_name = &self.name;
        let is_signature = member == record_name
            || member == format!("{record_name}.jws")
            || member == format!("{record_name}.p7s");
        if is_signature {
            self.rows.remove(member);
            return Ok(None);
        }
        let row = self.rows.remove(member).with_context(|| {
            format!(
                "{member} is not listed in {record_name}; the wheel was modified after it was built"
            )
        })?;
        let Some(hash) = row.hash else {
            bail!("{record_name} has no hash for {member}");
        };
        let Some(b64) = hash.strip_prefix("sha256=") else {
            bail!("{record_name}: hash of {member} is `{hash}`, expected sha256=...");
        };
        Ok(Some(Expected {
            member: member.to_string(),
            b64: b64.trim_end_matches('=').to_string(),
            size: row.size,
        }))
    }

    /// Errors if RECORD lists a file the wheel does not hold; call after
    /// every member went through [`Record::expect`].
    pub fn finish(self) -> Result<()> {
        if let Some(missing) = self.rows.keys().next() {
            bail!("{} lists {missing}, which is not in the wheel", self.name);
        }
        Ok(())
    }
}

impl Expected {
    /// Compares the digest of the member's complete bytes with RECORD.
    pub fn verify(&self, digest: &Digest) -> Result<()> {
        let got = digest.b64();
        if got != self.b64 {
            bail!(
                "RECORD hash mismatch for {}: RECORD says sha256={}, the file has sha256={got}; \
                 the wheel is corrupt or was modified after it was built",
                self.member,
                self.b64
            );
        }
        if let Some(size) = self.size {
            if size != digest.len() {
                bail!(
                    "RECORD size mismatch for {}: RECORD says {size} bytes, the file has {}",
                    self.member,
                    digest.len()
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ";

    #[test]
    fn round_trip_with_quoted_paths() {
        let mut w = RecordWriter::new();
        w.hashed("pkg/a.py", HELLO, 5);
        w.hashed("pkg/with,comma.txt", HELLO, 5);
        w.hashed("pkg/say \"hi\".txt", HELLO, 5);
        w.hashed("pkg/\",\".txt", HELLO, 5);
        w.unhashed("d-1.dist-info/RECORD");
        let text = w.finish();
        assert_eq!(
            text,
            format!(
                "pkg/a.py,{HELLO},5\n\"pkg/with,comma.txt\",{HELLO},5\n\
                 \"pkg/say \"\"hi\"\".txt\",{HELLO},5\n\"pkg/\"\",\"\".txt\",{HELLO},5\n\
                 d-1.dist-info/RECORD,,\n"
            )
        );
        let rows = parse_record("d-1.dist-info/RECORD", &text).unwrap();
        let paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "pkg/a.py",
                "pkg/with,comma.txt",
                "pkg/say \"hi\".txt",
                "pkg/\",\".txt",
                "d-1.dist-info/RECORD"
            ]
        );
        assert_eq!(rows[1].hash.as_deref(), Some(HELLO));
        assert_eq!(rows[1].size, Some(5));
        assert_eq!((rows[4].hash.as_deref(), rows[4].size), (None, None));
        let mut again = RecordWriter::new();
        rows.iter().for_each(|r| again.push(r));
        assert_eq!(again.finish(), text);
    }

    #[test]
    fn malformed_rows_are_named() {
        let err = |text: &str| {
            format!(
                "{:#}",
                parse_record("d-1.dist-info/RECORD", text).unwrap_err()
            )
        };
        let e = err("a,sha256=x,1\n\"b,c,2\n");
        assert!(
            e.contains("d-1.dist-info/RECORD line 2: unterminated quote"),
            "{e}"
        );
        let e = err("a,sha256=x\n");
        assert!(
            e.contains("line 1: expected PATH,HASH,SIZE, got `a,sha256=x`"),
            "{e}"
        );
        let e = err("a,sha256=x,1,2\n");
        assert!(e.contains("expected PATH,HASH,SIZE"), "{e}");
        let e = err("\n\na,sha256=x,big\n");
        assert!(e.contains("line 3: size `big` is not a number"), "{e}");
        assert!(parse_record("R", "\n  \n").unwrap().is_empty());
    }

    #[test]
    fn rewrite_renames_and_rehashes() {
        let text = "a/x.so,sha256=old,10\n\"b,c.txt\",sha256=q,3\nd-1.dist-info/RECORD,,\n";
        let mut changed = BTreeMap::new();
        changed.insert("a/x.so".to_string(), ("sha256=new".to_string(), 7));
        let ren = |p: &str| p.replace("d-1.dist-info", "e-1.dist-info");
        let none = BTreeSet::new();
        fn edits<'a>(
            rename: &'a dyn Fn(&str) -> String,
            changed: &'a BTreeMap<String, (String, u64)>,
            removed: &'a BTreeSet<String>,
        ) -> RecordEdits<'a> {
            RecordEdits {
                rename,
                changed,
                removed,
                added: &[],
            }
        }
        let got =
            rewrite_record("d-1.dist-info/RECORD", text, &edits(&ren, &changed, &none)).unwrap();
        assert_eq!(
            got,
            "a/x.so,sha256=new,7\n\"b,c.txt\",sha256=q,3\ne-1.dist-info/RECORD,,\n"
        );
        changed.insert("gone.so".to_string(), ("sha256=new".to_string(), 7));
        let e = rewrite_record("d-1.dist-info/RECORD", text, &edits(&ren, &changed, &none))
            .unwrap_err();
        assert!(e.to_string().contains("does not list every member"), "{e}");
    }

    #[test]
    fn rewrite_keeps_other_rows_verbatim_drops_and_adds() {
        // Quoted needlessly and CRLF-ended: kept as written.
        let text = "\"a.py\",sha256=q,3\r\nb.py,sha256=r,4\nd-1.dist-info/RECORD,,\n";
        let removed: BTreeSet<String> = ["b.py".to_string()].into();
        let added = [RecordRow {
            path: "c.py".into(),
            hash: Some("sha256=s".into()),
            size: Some(5),
        }];
        let got = rewrite_record(
            "d-1.dist-info/RECORD",
            text,
            &RecordEdits {
                rename: &|p: &str| p.to_string(),
                changed: &BTreeMap::new(),
                removed: &removed,
                added: &added,
            },
        )
        .unwrap();
        assert_eq!(
            got,
            "\"a.py\",sha256=q,3\r\nc.py,sha256=s,5\nd-1.dist-info/RECORD,,\n"
        );
    }

    #[test]
    fn verify_rows() {
        let text = format!(
            "p/a.txt,{HELLO},5\np/b.txt,{HELLO},4\np/c.txt,,\np/d.txt,md5=x,1\nd.dist-info/RECORD,,\n"
        );
        let mut rec = Record::parse("d.dist-info/RECORD", &text).unwrap();
        let d = Digest::of(b"hello");
        rec.expect("p/a.txt").unwrap().unwrap().verify(&d).unwrap();
        let e = rec.expect("p/b.txt").unwrap().unwrap().verify(&d);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("RECORD size mismatch for p/b.txt"));
        let e = rec.expect("p/x.txt").unwrap_err().to_string();
        assert!(e.contains("p/x.txt is not listed"), "{e}");
        let e = rec.expect("p/c.txt").unwrap_err().to_string();
        assert!(e.contains("no hash for p/c.txt"), "{e}");
        let e = rec.expect("p/d.txt").unwrap_err().to_string();
        assert!(
            e.contains("hash of p/d.txt is `md5=x`, expected sha256="),
            "{e}"
        );
        assert!(rec.expect("d.dist-info/RECORD").unwrap().is_none());
        rec.finish().unwrap();

        let mut rec = Record::parse("d.dist-info/RECORD", &text).unwrap();
        let e = rec.expect("p/a.txt").unwrap().unwrap();
        let e = e.verify(&Digest::of(b"hellO")).unwrap_err().to_string();
        assert!(e.contains("RECORD hash mismatch for p/a.txt"), "{e}");
        let e = rec.finish().unwrap_err().to_string();
        assert!(
            e.contains("lists d.dist-info/RECORD, which is not in the wheel"),
            "{e}"
        );
    }
}
