//! Wheel tags (`python-abi-platform`, compressed tag sets) and the wheel
//! file name they end.

use anyhow::{bail, Result};

use crate::names::normalize_name;

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
