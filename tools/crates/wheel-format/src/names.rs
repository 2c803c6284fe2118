//! Distribution names (PEP 508 validity, PEP 503 / PEP 427 normalisation)
//! and the `.dist-info` directory name they make with a version.

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

/// The `{name}-{version}` stem of a wheel's `.dist-info` directory: the
/// normalised name and the version with `-` escaped as `_` (PEP 427), so
/// the stem splits at its one `-`.
pub fn dist_info_stem(name: &str, version: &str) -> String {
    format!("{}-{}", normalize_name(name), version.replace('-', "_"))
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

    /// PEP 503's examples all normalise to one name; PEP 427 file names
    /// spell it with `_`.
    #[test]
    fn pep503_and_pep427_normalisation() {
        for n in [
            "friendly-bard",
            "Friendly-Bard",
            "FRIENDLY-BARD",
            "friendly.bard",
            "friendly_bard",
            "friendly--bard",
            "FrIeNdLy-._.-bArD",
        ] {
            assert_eq!(canonical_name(n), "friendly-bard", "{n}");
            assert_eq!(normalize_name(n), "friendly_bard", "{n}");
        }
        assert_eq!(normalize_name("Jax.ROCm7-pjrt"), "jax_rocm7_pjrt");
        assert_eq!(
            dist_info_stem("Jax.ROCm7-pjrt", "1.0+local-1"),
            "jax_rocm7_pjrt-1.0+local_1"
        );
    }
}
