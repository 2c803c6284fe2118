//! Wheel member names, as `build` writes them and `check`/`inspect`/`thin`
//! accept them: what pip installs without complaint and the wheel spec
//! allows. One validator for the writer and the readers, so a wheel `build`
//! makes always passes `check`, and a wheel `check` passes always installs.

use std::collections::BTreeMap;

use anyhow::{bail, Result};

/// Why `name` (a file member; directory entries end in `/`) is not a valid
/// member name, or `None`. Rules: relative, `/`-separated, no `..`, `.` or
/// empty components, no drive letter, no backslash, no control character.
pub fn member_name_problem(name: &str) -> Option<&'static str> {
    let path = name.strip_suffix('/').unwrap_or(name);
    if path.is_empty() {
        return Some("it is empty");
    }
    if name.starts_with('/') {
        return Some("it is absolute (starts with '/'); installers would write outside the install directory");
    }
    if name.contains('\\') {
        return Some("it contains '\\'; member names use '/' as the separator and pip treats '\\' as one on Windows");
    }
    if name.chars().any(char::is_control) {
        return Some("it contains a control character (newline, tab, NUL, ...)");
    }
    let first = path.split('/').next().unwrap_or("");
    if first.len() >= 2 && first.as_bytes()[1] == b':' && first.as_bytes()[0].is_ascii_alphabetic()
    {
        return Some("it starts with a drive letter (like C:); member names are relative paths");
    }
    for c in path.split('/') {
        match c {
            ".." => {
                return Some(
                    "it contains a '..' component, which climbs out of the install directory",
                )
            }
            "." => return Some("it contains a '.' component"),
            "" => return Some("it has an empty component ('//')"),
            _ => {}
        }
    }
    None
}

/// `path`'s components with `.`, `..` and empty ones resolved lexically,
/// joined by `/` without a leading one (`a/b/../c` and `/a/b/../c` both
/// give `a/c`); `None` when `..` climbs above the start.
pub fn normalize_components(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            c => out.push(c),
        }
    }
    Some(out.join("/"))
}

/// Checks one member name; the error names it and says what is wrong.
pub fn validate_member_name(name: &str) -> Result<()> {
    match member_name_problem(name) {
        Some(why) => bail!(
            "invalid member name {name:?}: {why}; pip refuses to install such a wheel \
             (member names are relative paths like \"pkg/mod.py\")"
        ),
        None => Ok(()),
    }
}

/// The members of one wheel: every name valid, none twice, and no name
/// both a file and a directory (pip would fail with NotADirectoryError).
#[derive(Default)]
pub struct MemberSet {
    /// Path (without trailing '/') -> is a directory.
    seen: BTreeMap<String, bool>,
}

impl MemberSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a member: a file, or a directory if `name` ends in `/`.
    pub fn add(&mut self, name: &str) -> Result<()> {
        validate_member_name(name)?;
        let (path, is_dir) = match name.strip_suffix('/') {
            Some(p) => (p, true),
            None => (name, false),
        };
        match self.seen.get(path).copied() {
            Some(true) if is_dir => return Ok(()), // a repeated directory entry
            Some(false) if !is_dir => bail!(
                "member {path:?} appears twice; a wheel holds each path once \
                 (installers would keep only one of them)"
            ),
            Some(_) => {
                bail!("{path:?} is both a file and a directory in this wheel; rename one of them")
            }
            None => {}
        }
        // Every parent is a directory, so it must not be a file.
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let parent = &path[..end + i];
            match self.seen.get(parent) {
                Some(false) => bail!(
                    "{parent:?} is a file, but {path:?} puts it in a directory of that name; \
                     pip would fail with NotADirectoryError; rename one of them"
                ),
                Some(true) => {}
                None => {
                    self.seen.insert(parent.to_string(), true);
                }
            }
            end += i + 1;
        }
        self.seen.insert(path.to_string(), is_dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_pip_refuses() {
        for bad in [
            "../../etc/x",
            "/tmp/abs",
            "demo/../../../x",
            "..\\..\\x",
            ".data/data/../../..",
            "C:/x",
            "c:x",
            "a\nb",
            "a\0b",
            "a//b",
            "./a",
            "",
            "/",
        ] {
            assert!(member_name_problem(bad).is_some(), "{bad:?} accepted");
        }
        for good in [
            "a",
            "a/b.py",
            "a/",
            "pkg-1.0.dist-info/RECORD",
            "é/ü.py",
            "ab:c",
        ] {
            assert_eq!(member_name_problem(good), None, "{good:?}");
        }
    }

    #[test]
    fn collisions_and_duplicates() {
        let e = |names: &[&str]| -> String {
            let mut s = MemberSet::new();
            for n in names {
                if let Err(e) = s.add(n) {
                    return e.to_string();
                }
            }
            String::new()
        };
        assert!(e(&["demo/a", "demo/a/b.py"]).contains("NotADirectoryError"));
        assert!(e(&["demo/a/b.py", "demo/a"]).contains("both a file and a directory"));
        assert!(e(&["demo/a/", "demo/a"]).contains("both a file and a directory"));
        assert!(e(&["demo/a", "demo/a/"]).contains("both a file and a directory"));
        assert!(e(&["x", "x"]).contains("appears twice"));
        assert_eq!(e(&["d/", "d/", "d/x", "d/y/z", "d/y/w"]), "");
    }
}
