//! The MessagePack subset kpack uses: maps, arrays, strings, binary and
//! unsigned integers (plus nil and booleans when reading). Encoding picks the
//! smallest form, as Python's `msgpack.packb(..., use_bin_type=True)` does,
//! so archives and markers are byte-identical to the reference's.
//!
//! Decoding borrows from the input and builds no tree: [`decode`] checks the
//! whole value once (lengths against the bytes left, UTF-8, nesting) and
//! returns a [`Value`] whose arrays and maps are views of the input, decoded
//! item by item as they are iterated. Decoding allocates nothing, so memory
//! is the input's bytes however many values they hold; the callers' typed
//! forms (table of contents, markers) are charged to a [`Budget`]
//! proportional to the bytes they were read from.

use anyhow::{bail, Result};

/// A decoded value, borrowing strings, binary and collections from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Nil,
    Bool(bool),
    Uint(u64),
    /// A negative integer (kpack never writes one; read for completeness).
    Int(i64),
    Str(&'a str),
    Bin(&'a [u8]),
    Array(Seq<'a>),
    /// Entries in file order; [`Seq::len`] counts key-value pairs.
    Map(Seq<'a>),
}

/// The items of an array or map: their encoding (already checked by
/// [`decode`]), decoded as they are iterated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seq<'a> {
    bytes: &'a [u8],
    len: usize,
    depth: usize,
}

impl<'a> Seq<'a> {
    /// Items (arrays) or key-value pairs (maps).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items of an array, or keys and values alternately of a map.
    pub fn values(&self) -> Values<'a> {
        Values {
            r: Reader {
                bytes: self.bytes,
                pos: 0,
            },
            depth: self.depth,
        }
    }

    /// The key-value pairs of a map.
    pub fn pairs(&self) -> impl Iterator<Item = (Value<'a>, Value<'a>)> {
        let mut v = self.values();
        std::iter::from_fn(move || Some((v.next()?, v.next()?)))
    }
}

/// Iterator over checked items.
pub struct Values<'a> {
    r: Reader<'a>,
    depth: usize,
}

impl<'a> Iterator for Values<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        if self.r.pos >= self.r.bytes.len() {
            return None;
        }
        // The bytes were checked when the value was decoded: no error here.
        self.r.value(self.depth).ok()
    }
}

impl<'a> Value<'a> {
    /// The value of `key` in a map with string keys (the first, if repeated).
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        match self {
            Value::Map(seq) => seq
                .pairs()
                .find(|(k, _)| matches!(k, Value::Str(s) if *s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The values of `keys` in a map with string keys (the first of each,
    /// if repeated), found in one pass over the map: a caller needing
    /// several keys walks a large map once, not once per key.
    pub fn fields<const N: usize>(&self, keys: [&str; N]) -> [Option<Value<'a>>; N] {
        let mut out = [None; N];
        if let Value::Map(seq) = self {
            for (k, v) in seq.pairs() {
                if let Value::Str(k) = k {
                    if let Some(i) = keys.iter().position(|key| *key == k) {
                        if out[i].is_none() {
                            out[i] = Some(v);
                        }
                    }
                }
            }
        }
        out
    }

    pub fn as_str(&self) -> Option<&'a str> {
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

/// Memory a typed form decoded from MessagePack may take: `factor` bytes
/// per input byte plus a small allowance, charged as it is built (an
/// estimate of what the allocator really spends, see [`Budget::string`]).
/// Past it, decoding stops with an error instead of growing.
pub struct Budget {
    left: u64,
    limit: u64,
    what: &'static str,
}

/// A heap block's real cost: malloc rounds to 16 bytes with 8 of header
/// and never hands out less than 32.
fn heap(len: usize) -> u64 {
    if len == 0 {
        0
    } else {
        ((len as u64 + 8).div_ceil(16) * 16).max(32)
    }
}

impl Budget {
    /// `factor` bytes per byte of the `input_len` bytes decoded, plus
    /// `allowance`; `what` names the form in the error.
    pub fn new(input_len: usize, factor: u64, allowance: u64, what: &'static str) -> Budget {
        let limit = (input_len as u64).saturating_mul(factor) + allowance;
        Budget {
            left: limit,
            limit,
            what,
        }
    }

    /// Charges `bytes`.
    pub fn charge(&mut self, bytes: u64) -> Result<()> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => bail!(
                "{} decodes to more than {} bytes, the bound for its size: not written by kpack (too many small items)",
                self.what,
                self.limit
            ),
        }
    }

    /// Charges an owned copy of `s` (its `String` and heap block).
    pub fn string(&mut self, s: &str) -> Result<String> {
        self.charge(std::mem::size_of::<String>() as u64 + heap(s.len()))?;
        Ok(s.to_string())
    }

    /// Charges a vector of `n` elements of type `T`, allocated at that
    /// capacity after the charge succeeds.
    pub fn elements<T>(&mut self, n: usize) -> Result<()> {
        self.charge((n as u64).saturating_mul(std::mem::size_of::<T>() as u64))
    }

    /// A vector of capacity `n`, charged first.
    pub fn vec<T>(&mut self, n: usize) -> Result<Vec<T>> {
        self.elements::<T>(n)?;
        Ok(Vec::with_capacity(n))
    }
}

/// Deepest nesting accepted (kpack's documents are three levels deep).
const MAX_DEPTH: usize = 32;

/// Decodes and checks one value at the start of `bytes`; returns it and the
/// bytes it took. Trailing bytes are not an error (markers sit back to
/// back). Time is linear in the bytes taken (times the nesting, at most
/// [`MAX_DEPTH`], when collections are iterated); nothing is allocated.
pub fn decode(bytes: &[u8]) -> Result<(Value<'_>, usize)> {
    let mut r = Reader { bytes, pos: 0 };
    let v = r.value(0)?;
    Ok((v, r.pos))
}

/// Whether a type byte is a whole value.
fn is_one_byte(b: u8) -> bool {
    matches!(b, 0x00..=0x7f | 0xa0 | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
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

    fn value(&mut self, depth: usize) -> Result<Value<'a>> {
        if depth > MAX_DEPTH {
            bail!("MessagePack nesting deeper than {MAX_DEPTH} levels");
        }
        let at = self.pos;
        let b = self.take(1)?[0];
        Ok(match b {
            0x00..=0x7f => Value::Uint(u64::from(b)),
            0x80..=0x8f => Value::Map(self.seq(u64::from(b & 0x0f), 2, depth)?),
            0x90..=0x9f => Value::Array(self.seq(u64::from(b & 0x0f), 1, depth)?),
            0xa0..=0xbf => self.str(usize::from(b & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (b - 0xc4))?;
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                Value::Bin(self.take(n)?)
            }
            0xcc..=0xcf => Value::Uint(self.be(1 << (b - 0xcc))?),
            0xd0..=0xd3 => {
                let width = 1usize << (b - 0xd0);
                let raw = self.be(width)?;
                let shift = 64 - 8 * width as u32;
                Value::Int(((raw << shift) as i64) >> shift)
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (b - 0xd9))?;
                self.str(usize::try_from(n).unwrap_or(usize::MAX))?
            }
            0xdc | 0xdd => {
                let n = self.be(2 << (b - 0xdc))?;
                Value::Array(self.seq(n, 1, depth)?)
            }
            0xde | 0xdf => {
                let n = self.be(2 << (b - 0xde))?;
                Value::Map(self.seq(n, 2, depth)?)
            }
            0xe0..=0xff => Value::Int(i64::from(b as i8)),
            _ => bail!(
                "MessagePack type byte {b:#04x} at byte {at} (float or extension) is not used by kpack"
            ),
        })
    }

    fn str(&mut self, n: usize) -> Result<Value<'a>> {
        let at = self.pos;
        let raw = self.take(n)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(Value::Str(s)),
            Err(_) => bail!("MessagePack string at byte {at} is not UTF-8"),
        }
    }

    /// `n` entries of `per` values each (1: array, 2: map), checked and
    /// skipped; the view of them.
    fn seq(&mut self, n: u64, per: u64, depth: usize) -> Result<Seq<'a>> {
        let items = self.count(n.saturating_mul(per))?;
        let start = self.pos;
        let mut left = items;
        while left > 0 {
            // One-byte values (small integers, nil, booleans, empty
            // strings) in a tight loop: a long run of them is the cheapest
            // way to make a large document.
            if self.bytes.get(self.pos).is_some_and(|&b| is_one_byte(b)) {
                self.pos += 1;
            } else {
                self.value(depth + 1)?;
            }
            left -= 1;
        }
        Ok(Seq {
            bytes: &self.bytes[start..self.pos],
            len: items / per as usize,
            depth: depth + 1,
        })
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
        assert_eq!(v.get("a").and_then(|v| v.as_u64()), Some(0x7f));
        let Some(Value::Array(items)) = v.get(&long) else {
            panic!("{v:?}")
        };
        assert_eq!(
            items
                .values()
                .map(|i| i.as_u64().unwrap())
                .collect::<Vec<_>>(),
            [0x100, 0x1_0000, 0x1_0000_0000]
        );
        let Value::Map(m) = v else { panic!() };
        assert_eq!((m.len(), m.pairs().count()), (2, 2));
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
        // A map's count is of pairs: 2 pairs need 4 values.
        assert!(decode(&[0x82, 1, 2, 3]).is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = vec![0x91u8; 100];
        assert!(decode(&deep).unwrap_err().to_string().contains("nesting"));
    }

    #[test]
    fn errors_deep_inside_are_found_up_front() {
        // [[1, <invalid UTF-8 string>]]
        let bad = [0x91, 0x92, 0x01, 0xa1, 0xff];
        let err = decode(&bad).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn budget_refuses_past_its_bound() {
        let mut b = Budget::new(10, 4, 0, "test form");
        assert_eq!(b.string("").unwrap(), "");
        let err = b.string("x").unwrap_err().to_string();
        assert!(
            err.contains("test form decodes to more than 40 bytes"),
            "{err}"
        );
    }
}
