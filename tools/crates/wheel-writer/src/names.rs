//! Distribution names, PEP 440 versions and wheel tags, and the wheel file
//! name they make up (binary distribution format spec).

use anyhow::{bail, Result};

/// Validates a distribution name against PEP 508's
/// `^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$` (case-insensitive).
pub fn validate_name(name: &str) -> Result<()> {
    let ok_end = |c: char| c.is_ascii_alphanumeric();
    let ok_mid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let valid = !name.is_empty()
        && name.chars().all(ok_mid)
        && name.starts_with(ok_end)
        && name.ends_with(ok_end);
    if !valid {
        bail!(
            "invalid distribution name {name:?}: names are ASCII letters, digits, '.', '_' and '-', \
             and start and end with a letter or digit (PEP 508)"
        );
    }
    Ok(())
}

/// The file-name form of a distribution name: runs of `-_.` become one `_`,
/// lowercased (`re.sub(r"[-_.]+", "_", name).lower()`).
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_sep {
                out.push('_');
            }
            in_sep = true;
        } else {
            out.push(c.to_ascii_lowercase());
            in_sep = false;
        }
    }
    out
}

/// PEP 503 normalised name (`-` separated), used to compare requirement names.
pub fn canonical_name(name: &str) -> String {
    normalize_name(name).replace('_', "-")
}

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

/// One expanded wheel tag.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tag {
    pub python: String,
    pub abi: String,
    pub platform: String,
}

impl std::fmt::Display for Tag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.python, self.abi, self.platform)
    }
}

type TagCheck = fn(&str) -> bool;

fn valid_component(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn check_python(t: &str) -> bool {
    // An implementation abbreviation followed by a version: py3, cp312, pp310.
    let letters = t.bytes().take_while(|b| b.is_ascii_lowercase()).count();
    valid_component(t) && letters > 0 && t.as_bytes().get(letters).is_some_and(u8::is_ascii_digit)
}

fn check_abi(t: &str) -> bool {
    valid_component(t) && t.as_bytes()[0].is_ascii_lowercase()
}

fn check_platform(t: &str) -> bool {
    valid_component(t) && !t.starts_with('_') && !t.ends_with('_')
}

/// Parses the manifest's tag list (each entry may be a compressed tag set
/// like `py2.py3-none-any`) into expanded tags plus the file-name tag triple.
///
/// The file name uses one compressed tag set, so the expanded tags must be
/// exactly the product of their components; components keep the order of
/// first appearance.
pub fn parse_tags(tags: &[String]) -> Result<(Vec<Tag>, String)> {
    if tags.is_empty() {
        bail!("\"tags\" is empty: give at least one wheel tag such as \"py3-none-any\"");
    }
    let mut expanded: Vec<Tag> = Vec::new();
    let mut comps: [Vec<String>; 3] = Default::default();
    for t in tags {
        let parts: Vec<&str> = t.split('-').collect();
        if parts.len() != 3 {
            bail!("invalid wheel tag {t:?}: expected <python>-<abi>-<platform>, e.g. \"py3-none-any\" or \"cp312-cp312-manylinux_2_28_x86_64\"");
        }
        let checks: [(&str, TagCheck); 3] = [
            ("python", check_python),
            ("abi", check_abi),
            ("platform", check_platform),
        ];
        let mut sets: [Vec<&str>; 3] = Default::default();
        for (k, ((what, check), part)) in checks.iter().zip(&parts).enumerate() {
            for c in part.split('.') {
                if !check(c) {
                    bail!("invalid {what} tag {c:?} in wheel tag {t:?}: use lowercase letters, digits and '_' (e.g. py3, cp312, none, abi3, any, manylinux_2_28_x86_64)");
                }
                sets[k].push(c);
                if !comps[k].iter().any(|x| x == c) {
                    comps[k].push(c.to_string());
                }
            }
        }
        for py in &sets[0] {
            for abi in &sets[1] {
                for plat in &sets[2] {
                    let tag = Tag {
                        python: py.to_string(),
                        abi: abi.to_string(),
                        platform: plat.to_string(),
                    };
                    if !expanded.contains(&tag) {
                        expanded.push(tag);
                    }
                }
            }
        }
    }
    let product = comps[0].len() * comps[1].len() * comps[2].len();
    if product != expanded.len() {
        bail!(
            "wheel tags {tags:?} cannot be written as one compressed tag set in the file name \
             (every python/abi/platform combination must be present); build one wheel per tag group"
        );
    }
    let file_tag = comps
        .iter()
        .map(|c| c.join("."))
        .collect::<Vec<_>>()
        .join("-");
    Ok((expanded, file_tag))
}

/// `{name}-{version}-{tags}.whl` with the normalised name.
pub fn wheel_file_name(name: &str, version: &str, file_tag: &str) -> String {
    format!("{}-{}-{}.whl", normalize_name(name), version, file_tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["jax-rocm7-plugin", "a", "A.b_c-1", "jaxlib", "X1"] {
            validate_name(ok).unwrap();
        }
        for bad in ["", "-a", "a-", "a b", "a/b", "é", ".a", "a_"] {
            let e = validate_name(bad).unwrap_err().to_string();
            assert!(e.contains("invalid distribution name"), "{e}");
        }
        assert_eq!(normalize_name("Jax-ROCm7._-Plugin"), "jax_rocm7_plugin");
        assert_eq!(canonical_name("Foo_Bar.baz"), "foo-bar-baz");
    }

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
    fn version_must_be_normalised() {
        validate_version("0.7.1").unwrap();
        validate_version("0.7.1rc1").unwrap();
        let e = validate_version("0.7.1-rc1").unwrap_err().to_string();
        assert!(e.contains("use \"0.7.1rc1\""), "{e}");
        let e = validate_version("banana").unwrap_err().to_string();
        assert!(e.contains("not a PEP 440"), "{e}");
    }

    #[test]
    fn tags() {
        let (t, f) = parse_tags(&["py3-none-any".into()]).unwrap();
        assert_eq!(f, "py3-none-any");
        assert_eq!(t.len(), 1);
        let (t, f) = parse_tags(&["py2.py3-none-any".into()]).unwrap();
        assert_eq!(f, "py2.py3-none-any");
        assert_eq!(
            t.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            ["py2-none-any", "py3-none-any"]
        );
        let (t, f) = parse_tags(&[
            "cp312-cp312-manylinux_2_28_x86_64".into(),
            "cp312-cp312-manylinux2014_x86_64".into(),
        ])
        .unwrap();
        assert_eq!(f, "cp312-cp312-manylinux_2_28_x86_64.manylinux2014_x86_64");
        assert_eq!(t.len(), 2);
        assert!(parse_tags(&[
            "cp312-cp312-linux_x86_64".into(),
            "cp313-cp313-linux_x86_64".into()
        ])
        .unwrap_err()
        .to_string()
        .contains("compressed tag set"));
        for bad in [
            "py3-none",
            "py3-none-any-x",
            "Py3-none-any",
            "3-none-any",
            "py3--any",
            "py3-none-a.",
            "",
        ] {
            assert!(parse_tags(&[bad.into()]).is_err(), "{bad:?} accepted");
        }
        assert!(parse_tags(&[]).is_err());
        assert_eq!(
            wheel_file_name("Jax-ROCm7-Plugin", "0.7.1", &f),
            "jax_rocm7_plugin-0.7.1-cp312-cp312-manylinux_2_28_x86_64.manylinux2014_x86_64.whl"
        );
    }
}
