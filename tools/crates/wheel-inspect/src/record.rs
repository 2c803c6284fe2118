//! Verifying wheel members against `*.dist-info/RECORD` (sha256 and size)
//! while they are streamed. Shared by `rocm-wheel inspect` and
//! `rocm-wheel check` so both reject the same corrupt wheels with the same
//! messages.

use std::collections::BTreeMap;
use std::io::Read;

use anyhow::{bail, Context, Result};
use base64::Engine;
use sha2::{Digest as _, Sha256};

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

/// sha256 and length of bytes seen so far.
#[derive(Clone, Default)]
pub struct Digest {
    hasher: Sha256,
    len: u64,
}

/// Splits one CSV record (RECORD files quote fields holding commas).
fn csv_fields(line: &str) -> Result<Vec<String>> {
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

impl Record {
    /// Parses `text`, the content of the member `record_name`
    /// (`path,sha256=<urlsafe b64>,size` per line).
    pub fn parse(record_name: &str, text: &str) -> Result<Record> {
        let mut rows = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let f = csv_fields(line).with_context(|| format!("{record_name} line {}", i + 1))?;
            if f.len() != 3 {
                bail!(
                    "{record_name} line {}: expected PATH,HASH,SIZE, got `{line}`",
                    i + 1
                );
            }
            let hash = (!f[1].is_empty()).then(|| f[1].clone());
            let size = if f[2].is_empty() {
                None
            } else {
                Some(f[2].parse::<u64>().with_context(|| {
                    format!(
                        "{record_name} line {}: size `{}` is not a number",
                        i + 1,
                        f[2]
                    )
                })?)
            };
            rows.insert(f[0].clone(), Row { hash, size });
        }
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
            if size != digest.len {
                bail!(
                    "RECORD size mismatch for {}: RECORD says {size} bytes, the file has {}",
                    self.member,
                    digest.len
                );
            }
        }
        Ok(())
    }
}

impl Digest {
    pub fn update(&mut self, data: &[u8]) {
        self.hasher.update(data);
        self.len += data.len() as u64;
    }

    /// Number of bytes hashed.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn b64(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.hasher.clone().finalize())
    }

    /// The hash field of a RECORD row for these bytes: `sha256=<b64>`.
    pub fn record_hash(&self) -> String {
        format!("sha256={}", self.b64())
    }
}

/// A reader that hashes what passes through it.
pub struct HashingReader<R> {
    inner: R,
    digest: Digest,
    eof: bool,
}

impl<R: Read> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            digest: Digest::default(),
            eof: false,
        }
    }

    /// The wrapped reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The digest of the whole stream, or `None` if it was not read to the
    /// end.
    pub fn complete_digest(&self) -> Option<&Digest> {
        self.eof.then_some(&self.digest)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.eof = true;
        }
        self.digest.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_fields("a,b,c").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            csv_fields("\"a,b\",sha256=x,3").unwrap(),
            ["a,b", "sha256=x", "3"]
        );
        assert_eq!(csv_fields("\"a\"\"b\",,").unwrap(), ["a\"b", "", ""]);
        assert!(csv_fields("\"a,b").is_err());
    }

    /// sha256 of "hello" as `sha256sum` and Python's RECORD writers give it.
    #[test]
    fn verify_rows() {
        let text = "p/a.txt,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,5\n\
                    p/b.txt,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,4\n\
                    p/c.txt,,\n\
                    d.dist-info/RECORD,,\n";
        let mut rec = Record::parse("d.dist-info/RECORD", text).unwrap();
        let mut r = HashingReader::new(&b"hello"[..]);
        let mut sink = Vec::new();
        r.read_to_end(&mut sink).unwrap();
        let d = r.complete_digest().unwrap().clone();
        assert_eq!(
            d.record_hash(),
            "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ"
        );
        rec.expect("p/a.txt").unwrap().unwrap().verify(&d).unwrap();
        let e = rec.expect("p/b.txt").unwrap().unwrap().verify(&d);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("RECORD size mismatch for p/b.txt"),);
        let mut other = Digest::default();
        other.update(b"hellO");
        let e = rec.expect("p/x.txt");
        assert!(e.unwrap_err().to_string().contains("p/x.txt is not listed"));
        let e = rec.expect("p/c.txt").unwrap_err().to_string();
        assert!(e.contains("no hash for p/c.txt"), "{e}");
        assert!(rec.expect("d.dist-info/RECORD").unwrap().is_none());
        let mut rec = Record::parse("d.dist-info/RECORD", text).unwrap();
        let e = rec.expect("p/a.txt").unwrap().unwrap().verify(&other);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("RECORD hash mismatch for p/a.txt"));
        let e = rec.finish().unwrap_err().to_string();
        assert!(
            e.contains("lists d.dist-info/RECORD, which is not in the wheel"),
            "{e}"
        );
        // A partly read stream has no complete digest.
        let mut r = HashingReader::new(&b"hello"[..]);
        let mut two = [0u8; 2];
        r.read_exact(&mut two).unwrap();
        assert!(r.complete_digest().is_none());
    }
}
