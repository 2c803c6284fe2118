//! The hashes RECORD holds: sha256, written `sha256=<urlsafe base64>`
//! without `=` padding (PEP 376 / the binary distribution format), and
//! readers and writers that hash what streams through them so no member is
//! read twice just to be hashed.

use std::io::{Read, Write};

use base64::Engine;
use sha2::{Digest as _, Sha256};

/// The RECORD hash field of bytes whose sha256 is `sha256`:
/// `sha256=<urlsafe base64, no padding>`, as pip and `wheel` write it.
pub fn record_hash(sha256: &[u8]) -> String {
    format!("sha256={}", urlsafe_b64(sha256))
}

/// Urlsafe base64 without padding: the encoding of RECORD hashes.
fn urlsafe_b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// sha256 and length of bytes seen so far.
#[derive(Clone, Default)]
pub struct Digest {
    hasher: Sha256,
    len: u64,
}

impl Digest {
    /// The digest of `data` at once (a small generated member).
    pub fn of(data: &[u8]) -> Digest {
        let mut d = Digest::default();
        d.update(data);
        d
    }

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

    /// The urlsafe base64 sha256 (no padding), as RECORD spells it after
    /// `sha256=`.
    pub(crate) fn b64(&self) -> String {
        urlsafe_b64(&self.hasher.clone().finalize())
    }

    /// The sha256 in lowercase hex, as package indexes write it
    /// (`#sha256=<hex>` fragments, PEP 503 / PEP 691).
    pub fn sha256_hex(&self) -> String {
        self.hasher
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The hash field of a RECORD row for these bytes: `sha256=<b64>`.
    pub fn record_hash(&self) -> String {
        record_hash(&self.hasher.clone().finalize())
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
    /// end (a digest of part of a member must never pass for all of it).
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

/// A writer that hashes what it passes on: a member's RECORD row comes
/// from the bytes as they are written, not from a second read.
pub struct HashingWriter<W> {
    inner: W,
    digest: Digest,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            digest: Digest::default(),
        }
    }

    /// The digest of everything written so far.
    pub fn digest(&self) -> &Digest {
        &self.digest
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.digest.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sha256 of "hello" as `sha256sum` and Python's RECORD writers give it:
    /// `base64.urlsafe_b64encode(hashlib.sha256(b"hello").digest()).rstrip(b"=")`.
    const HELLO: &str = "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ";

    #[test]
    fn encoding_is_urlsafe_without_padding() {
        let sha: [u8; 32] = Sha256::digest(b"hello").into();
        assert_eq!(record_hash(&sha), HELLO);
        assert_eq!(Digest::of(b"hello").record_hash(), HELLO);
        // 0xfb 0xff encodes to `+/8=` in standard base64.
        assert_eq!(record_hash(&[0xfb, 0xff]), "sha256=-_8");
        // sha256 of nothing, as Python's wheel writes it for an empty file.
        assert_eq!(
            Digest::of(b"hello").sha256_hex(),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(
            Digest::default().record_hash(),
            "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
    }

    #[test]
    fn reader_and_writer_hash_the_stream() {
        let mut r = HashingReader::new(&b"hello"[..]);
        let mut two = [0u8; 2];
        r.read_exact(&mut two).unwrap();
        assert!(r.complete_digest().is_none(), "partly read");
        std::io::copy(&mut r, &mut std::io::sink()).unwrap();
        assert_eq!(r.complete_digest().unwrap().record_hash(), HELLO);
        assert_eq!(r.complete_digest().unwrap().len(), 5);

        let mut out = Vec::new();
        let mut w = HashingWriter::new(&mut out);
        w.write_all(b"hel").unwrap();
        w.write_all(b"lo").unwrap();
        assert_eq!(w.digest().record_hash(), HELLO);
        assert_eq!(w.digest().len(), 5);
        assert_eq!(out, b"hello");
    }
}
