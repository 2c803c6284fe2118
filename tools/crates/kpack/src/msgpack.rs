//! The MessagePack subset kpack uses: maps, arrays, strings, binary and
//! unsigned integers (plus nil and booleans when reading). Encoding picks the
//! smallest form, as Python's `msgpack.packb(..., use_bin_type=True)` does,
//! so archives and markers are byte-identical to the reference's.
//!
//! Decoding is bounded by the input: a length is checked against the bytes
//! left before anything is allocated, and nesting is limited.

use anyhow::{bail, Result};

/// A decoded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Nil,
    Bool(bool),
    Uint(u64),
    /// A negative integer (kpack never writes one; read for completeness).
    Int(i64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    /// Entries in file order.
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value of `key` in a map with string keys.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Uint(v) => Some(*v),
            _ => None,
        }
    }

    /// The kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "a boolean",
            Value::Uint(_) | Value::Int(_) => "an integer",
            Value::Str(_) => "a string",
            Value::Bin(_) => "binary",
            Value::Array(_) => "an array",
            Value::Map(_) => "a map",
        }
    }
}

/// Deepest nesting accepted (kpack's documents are three levels deep).
const MAX_DEPTH: usize = 32;

/// Decodes one value at the start of `bytes`; returns it and the bytes it
/// took. Trailing bytes are not an error (markers sit back to back).
pub fn decode(bytes: &[u8]) -> Result<(Value, usize)> {
    let mut r = Reader { bytes, pos: 0 };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.bytes.len() - self.pos < n {
            bail!(
                "MessagePack data ends at byte {} where {n} more bytes are needed (truncated or not MessagePack)",
                self.bytes.len()
            );
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// A collection of `n` items, each at least one byte: more than the bytes
    /// left is malformed, whatever the header claims.
    fn count(&self, n: u64) -> Result<usize> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            bail!(
                "MessagePack header at byte {} claims {n} items, more than the {left} bytes left",
                self.pos
            );
        }
        Ok(n as usize)
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            bail!("MessagePack nesting deeper than {MAX_DEPTH} levels");
        }
        let at = self.pos;
        let b = self.take(1)?[0];
        Ok(match b {
            0x00..=0x7f => Value::Uint(u64::from(b)),
            0x80..=0x8f => self.map(u64::from(b & 0x0f), depth)?,
            0x90..=0x9f => self.array(u64::from(b & 0x0f), depth)?,
            0xa0..=0xbf => self.str(usize::from(b & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (b - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xcc..=0xcf => Value::Uint(self.be(1 << (b - 0xcc))?),
            0xd0..=0xd3 => {
                let width = 1usize << (b - 0xd0);
                let raw = self.be(width)?;
                let shift = 64 - 8 * width as u32;
                Value::Int(((raw << shift) as i64) >> shift)
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (b - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.be(2 << (b - 0xdc))?;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.be(2 << (b - 0xde))?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(i64::from(b as i8)),
            _ => bail!(
                "MessagePack type byte {b:#04x} at byte {at} (float or extension) is not used by kpack"
            ),
        })
    }

    fn str(&mut self, n: usize) -> Result<Value> {
        let at = self.pos;
        let raw = self.take(n)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(Value::Str(s.to_string())),
            Err(_) => bail!("MessagePack string at byte {at} is not UTF-8"),
        }
    }

    fn array(&mut self, n: u64, depth: usize) -> Result<Value> {
        let n = self.count(n)?;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: u64, depth: usize) -> Result<Value> {
        let n = self.count(n.saturating_mul(2))? / 2;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

/// Appends MessagePack encodings to a buffer.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
}

impl Encoder {
    fn head(&mut self, fix: u8, fix_max: u64, wide: [u8; 3], n: u64) {
        // wide: the 8-bit (0 if none), 16-bit and 32-bit forms' type bytes.
        if n <= fix_max {
            self.buf.push(fix | n as u8);
        } else if wide[0] != 0 && n <= 0xff {
            self.buf.extend([wide[0], n as u8]);
        } else if n <= 0xffff {
            self.buf.push(wide[1]);
            self.buf.extend((n as u16).to_be_bytes());
        } else {
            self.buf.push(wide[2]);
            self.buf.extend((n as u32).to_be_bytes());
        }
    }

    pub fn map(&mut self, entries: usize) -> &mut Self {
        self.head(0x80, 15, [0, 0xde, 0xdf], entries as u64);
        self
    }

    pub fn array(&mut self, items: usize) -> &mut Self {
        self.head(0x90, 15, [0, 0xdc, 0xdd], items as u64);
        self
    }

    pub fn str(&mut self, s: &str) -> &mut Self {
        self.head(0xa0, 31, [0xd9, 0xda, 0xdb], s.len() as u64);
        self.buf.extend(s.as_bytes());
        self
    }

    pub fn uint(&mut self, v: u64) -> &mut Self {
        if v < 0x80 {
            self.buf.push(v as u8);
        } else if v <= 0xff {
            self.buf.extend([0xcc, v as u8]);
        } else if v <= 0xffff {
            self.buf.push(0xcd);
            self.buf.extend((v as u16).to_be_bytes());
        } else if v <= 0xffff_ffff {
            self.buf.push(0xce);
            self.buf.extend((v as u32).to_be_bytes());
        } else {
            self.buf.push(0xcf);
            self.buf.extend(v.to_be_bytes());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_width() {
        let long = "x".repeat(300);
        let mut e = Encoder::default();
        e.map(2).str("a").uint(0x7f).str(&long).array(3);
        e.uint(0x100).uint(0x1_0000).uint(0x1_0000_0000);
        let (v, used) = decode(&e.buf).unwrap();
        assert_eq!(used, e.buf.len());
        assert_eq!(v.get("a").and_then(Value::as_u64), Some(0x7f));
        assert_eq!(
            v.get(&long),
            Some(&Value::Array(vec![
                Value::Uint(0x100),
                Value::Uint(0x1_0000),
                Value::Uint(0x1_0000_0000)
            ]))
        );
    }

    #[test]
    fn claims_larger_than_the_input_fail_before_allocating() {
        // array32 claiming 4 billion items in 5 bytes.
        let err = decode(&[0xdd, 0xff, 0xff, 0xff, 0xff])
            .unwrap_err()
            .to_string();
        assert!(err.contains("claims 4294967295 items"), "{err}");
        let err = decode(&[0xdb, 0xff, 0xff, 0xff, 0xff])
            .unwrap_err()
            .to_string();
        assert!(err.contains("truncated"), "{err}");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = vec![0x91u8; 100];
        assert!(decode(&deep).unwrap_err().to_string().contains("nesting"));
    }
}
