//! PEP 440 versions: parsing into the normalised spelling, and checking a
//! version is already spelled so (a wheel's file name and METADATA must
//! agree byte for byte).
//! Hand-written rather than `pep440_rs`: the writer needs one version's
//! normal spelling, not ordering or specifier algebra, and the differential
//! tests (`packaging.rs`, `tests/packaging_metadata.rs`) hold it to
//! `packaging`'s verdicts and normal forms.

use anyhow::{bail, Result};

/// Parses a PEP 440 version and returns its normalised spelling, or an error
/// if it is not a valid version at all.
pub fn normalize_version(v: &str) -> Result<String> {
    let bad = || {
        anyhow::anyhow!("invalid version {v:?}: not a PEP 440 version (e.g. 1.2.3, 1.2.3rc1, 1.2.3.post1, 1.2.3.dev0, 1!2.0, 1.2.3+local.1)")
    };
    let s = v.trim().to_ascii_lowercase();
    let mut p = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    p.eat(b"v");
    let mut out = p.epoch();
    out.push_str(&p.release().ok_or_else(bad)?);
    out.push_str(&p.pre_release());
    out.push_str(&p.post_release());
    out.push_str(&p.dev_release());
    out.push_str(&p.local().ok_or_else(bad)?);
    if p.i != p.s.len() {
        return Err(bad());
    }
    Ok(out)
}

/// Validates that `v` is a PEP 440 version spelled in normalised form.
pub fn validate_version(v: &str) -> Result<()> {
    let n = normalize_version(v)?;
    if n != v {
        bail!("version {v:?} is valid but not normalised (PEP 440); use {n:?}");
    }
    Ok(())
}

/// Whether `a` and `b` are one version as PEP 440 compares them (pip,
/// packaging's `Version`): the same normal form once the release's
/// trailing zeros are dropped (`1.0` is `1.0.0`, `1.0-post1` is
/// `1.0.post1`; a local label counts: `1.0+a` is not `1.0`). A string
/// that is not a version is equal only to itself.
pub fn same_version(a: &str, b: &str) -> bool {
    match (normalize_version(a), normalize_version(b)) {
        (Ok(x), Ok(y)) => comparison_form(&x) == comparison_form(&y),
        _ => a == b,
    }
}

/// The normal form `n` with its release's trailing `.0`s dropped.
fn comparison_form(n: &str) -> String {
    let (epoch, rest) = match n.split_once('!') {
        Some((e, r)) => (format!("{e}!"), r),
        None => (String::new(), n),
    };
    // The release is the leading `N(.N)*`; what follows (`a1`, `.post1`,
    // `.dev0`, `+local`) starts with a letter, or a dot then a letter.
    let b = rest.as_bytes();
    let mut end = 0;
    while end < b.len()
        && (b[end].is_ascii_digit()
            || (b[end] == b'.' && b.get(end + 1).is_some_and(u8::is_ascii_digit)))
    {
        end += 1;
    }
    let mut release: Vec<&str> = rest[..end].split('.').collect();
    while release.len() > 1 && release.last() == Some(&"0") {
        release.pop();
    }
    format!("{epoch}{}{}", release.join("."), &rest[end..])
}

fn strip_zeros(s: &str) -> String {
    let t = s.trim_start_matches('0');
    if t.is_empty() {
        "0".into()
    } else {
        t.into()
    }
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, w: &[u8]) -> bool {
        if self.s[self.i..].starts_with(w) {
            self.i += w.len();
            true
        } else {
            false
        }
    }
    fn sep(&mut self) {
        if self.i < self.s.len() && matches!(self.s[self.i], b'.' | b'_' | b'-') {
            self.i += 1;
        }
    }
    fn peek_digit(&self) -> bool {
        self.i < self.s.len() && self.s[self.i].is_ascii_digit()
    }
    fn number(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek_digit() {
            self.i += 1;
        }
        (self.i > start).then(|| strip_zeros(std::str::from_utf8(&self.s[start..self.i]).unwrap()))
    }
}

/// The parts of a PEP 440 version, in order; each returns its normalised
/// spelling (empty if absent) and leaves the cursor after it.
impl Cursor<'_> {
    /// `N!`; empty for epoch 0.
    fn epoch(&mut self) -> String {
        let save = self.i;
        if let Some(n) = self.number() {
            if self.eat(b"!") {
                return if n == "0" {
                    String::new()
                } else {
                    format!("{n}!")
                };
            }
        }
        self.i = save;
        String::new()
    }

    /// `N(.N)*`; None if there is no number.
    fn release(&mut self) -> Option<String> {
        let mut out = self.number()?;
        loop {
            let save = self.i;
            if self.eat(b".") {
                if let Some(n) = self.number() {
                    out.push('.');
                    out.push_str(&n);
                    continue;
                }
            }
            self.i = save;
            return Some(out);
        }
    }

    /// `[sep](a|b|rc and their aliases)[sep][N]`.
    fn pre_release(&mut self) -> String {
        let save = self.i;
        self.sep();
        let pre = [
            ("alpha", "a"),
            ("beta", "b"),
            ("preview", "rc"),
            ("pre", "rc"),
            ("rc", "rc"),
            ("a", "a"),
            ("b", "b"),
            ("c", "rc"),
        ];
        if let Some(tag) = pre
            .iter()
            .find(|(w, _)| self.eat(w.as_bytes()))
            .map(|x| x.1)
        {
            self.sep();
            let n = self.number().unwrap_or_else(|| "0".into());
            return format!("{tag}{n}");
        }
        self.i = save;
        String::new()
    }

    /// `-N` or `[sep](post|rev|r)[sep][N]`.
    fn post_release(&mut self) -> String {
        let save = self.i;
        if self.eat(b"-") && self.peek_digit() {
            let n = self.number().unwrap();
            return format!(".post{n}");
        }
        self.i = save;
        self.word_number(&["post", "rev", "r"])
            .map(|n| format!(".post{n}"))
            .unwrap_or_default()
    }

    /// `[sep]dev[sep][N]`.
    fn dev_release(&mut self) -> String {
        self.word_number(&["dev"])
            .map(|n| format!(".dev{n}"))
            .unwrap_or_default()
    }

    /// `[sep]WORD[sep][N]` for the first of `words` found: N, 0 if absent.
    /// None (and the cursor unmoved) if no word is there.
    fn word_number(&mut self, words: &[&str]) -> Option<String> {
        let save = self.i;
        self.sep();
        if words.iter().any(|w| self.eat(w.as_bytes())) {
            self.sep();
            return Some(self.number().unwrap_or_else(|| "0".into()));
        }
        self.i = save;
        None
    }

    /// `+segment([._-]segment)*`, to the end; None if a segment is empty
    /// or not alphanumeric.
    fn local(&mut self) -> Option<String> {
        if !self.eat(b"+") {
            return Some(String::new());
        }
        let rest = std::str::from_utf8(&self.s[self.i..]).unwrap();
        let segs: Vec<&str> = rest.split(['.', '_', '-']).collect();
        if segs
            .iter()
            .any(|s| s.is_empty() || !s.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return None;
        }
        let segs: Vec<String> = segs
            .iter()
            .map(|s| {
                if s.bytes().all(|b| b.is_ascii_digit()) {
                    strip_zeros(s)
                } else {
                    s.to_string()
                }
            })
            .collect();
        self.i = self.s.len();
        Some(format!("+{}", segs.join(".")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_normalise() {
        let cases = [
            ("0.7.1", "0.7.1"),
            ("v1.0", "1.0"),
            ("1.0-1", "1.0.post1"),
            ("1.0.alpha.2", "1.0a2"),
            ("1.0c1", "1.0rc1"),
            ("1.0-preview-3", "1.0rc3"),
            ("01.002", "1.2"),
            ("0!1.0", "1.0"),
            ("2!1.0", "2!1.0"),
            ("1.0.dev", "1.0.dev0"),
            ("1.0rev", "1.0.post0"),
            (
                "1.0a1.post2.dev3+Ubuntu-01_x",
                "1.0a1.post2.dev3+ubuntu.1.x",
            ),
            ("1.0+abc.5", "1.0+abc.5"),
            (" 1.0 ", "1.0"),
        ];
        for (i, o) in cases {
            assert_eq!(normalize_version(i).unwrap(), o, "{i}");
        }
        for bad in [
            "", "1.", "a1", "1.0+", "1.0+a..b", "1.0.x", "1.0 2", "1.0-", "1..0",
        ] {
            assert!(normalize_version(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn versions_compare_as_pep_440_does() {
        for (a, b) in [
            ("1.0", "1.0.0"),
            ("1", "1.0.0.0"),
            ("0", "0.0"),
            ("v1.0", "1.0"),
            ("1.0-post1", "1.0.post1"),
            ("1.0.0.post1", "1.0.post1"),
            ("1.0c1", "1.0.0rc1"),
            ("1.0.dev0", "1.dev"),
            ("1!1.0", "1!1"),
            ("1.0+Local.01", "1.0.0+local.1"),
            ("not a version", "not a version"),
        ] {
            assert!(same_version(a, b), "{a} != {b}");
        }
        for (a, b) in [
            ("1.0", "1.0.1"),
            ("1.10", "1.1"),
            ("10", "1"),
            ("1.0", "1.0+local"),
            ("1!1.0", "1.0"),
            ("1.0", "1.0.post0"),
            ("1.0a1", "1.0"),
            ("1.0.dev0", "1.0"),
            ("not a version", "Not a version"),
        ] {
            assert!(!same_version(a, b), "{a} == {b}");
        }
    }

    #[test]
    fn version_must_be_normalised() {
        validate_version("0.7.1").unwrap();
        validate_version("0.7.1rc1").unwrap();
        let e = validate_version("0.7.1-rc1").unwrap_err().to_string();
        assert!(e.contains("use \"0.7.1rc1\""), "{e}");
        let e = validate_version("banana").unwrap_err().to_string();
        assert!(e.contains("not a PEP 440"), "{e}");
    }
}
