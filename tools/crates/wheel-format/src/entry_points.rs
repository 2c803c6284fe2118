//! `entry_points.txt`: the INI file of console scripts and plugin entry
//! points.

use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// entry_points.txt: INI, groups and names sorted (the maps are ordered).
pub fn render_entry_points(
    eps: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<Option<String>> {
    if eps.is_empty() {
        return Ok(None);
    }
    let mut s = String::new();
    for (group, entries) in eps {
        if group.is_empty() || group.contains(['[', ']', '\n', '\r']) || group.trim() != group {
            bail!("entry point group {group:?} is invalid: no brackets, line breaks or surrounding spaces");
        }
        let _ = writeln!(s, "[{group}]");
        for (name, value) in entries {
            if name.is_empty()
                || name.contains(['=', '\n', '\r'])
                || name.starts_with('[')
                || name.trim() != name
            {
                bail!("entry point name {name:?} in [{group}] is invalid: no '=', line breaks, leading '[' or surrounding spaces");
            }
            let (module, attr) = match value.split_once(':') {
                Some((m, a)) => (m.trim(), Some(a.trim())),
                None => (value.trim(), None),
            };
            let ok = module.split('.').all(is_identifier)
                && attr.is_none_or(|a| a.split('.').all(is_identifier));
            if !ok {
                bail!("entry point {name:?} in [{group}] has value {value:?}; expected \"package.module\" or \"package.module:object.attr\"");
            }
            let _ = writeln!(s, "{name} = {value}");
        }
        s.push('\n');
    }
    Ok(Some(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_sorted_and_validated() {
        let mut eps = BTreeMap::new();
        eps.insert(
            "z".to_string(),
            BTreeMap::from([
                ("b".to_string(), "m:f".to_string()),
                ("a".to_string(), "m.n".to_string()),
            ]),
        );
        eps.insert(
            "console_scripts".to_string(),
            BTreeMap::from([("tool".to_string(), "pkg.cli:main".to_string())]),
        );
        let s = render_entry_points(&eps).unwrap().unwrap();
        assert_eq!(
            s,
            "[console_scripts]\ntool = pkg.cli:main\n\n[z]\na = m.n\nb = m:f\n\n"
        );
        for bad in ["", "1mod", "m:", "m:a b", "a..b"] {
            let eps = BTreeMap::from([(
                "g".to_string(),
                BTreeMap::from([("n".to_string(), bad.to_string())]),
            )]);
            assert!(render_entry_points(&eps).is_err(), "{bad:?}");
        }
        let eps = BTreeMap::from([(
            "g".to_string(),
            BTreeMap::from([("a=b".to_string(), "m".to_string())]),
        )]);
        assert!(render_entry_points(&eps).is_err());
        assert!(render_entry_points(&BTreeMap::new()).unwrap().is_none());
    }
}
