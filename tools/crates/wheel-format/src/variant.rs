//! Wheel variants (PEP 825 draft, as variantlib 0.2.2 implements it with
//! the `variant.json` schema v0.2.0): the character rules of variant
//! labels and properties, which the file name, `variant.json` and the
//! variant markers share. Drafts change: what depends on them is this
//! module, the marker half of `pep508.rs`, and the `variant.json` schema
//! (read, merge and render) in `variant_json.rs`.

use anyhow::{bail, Result};

/// The `$schema` of `variant.json` and `{name}-{version}-variants.json`.
pub const VARIANT_SCHEMA_URL: &str = "https://variants-schema.wheelnext.dev/v0.2.0.json";

/// The `*.dist-info` member holding a variant wheel's metadata.
pub const VARIANT_JSON: &str = "variant.json";

/// The label of the variant with no properties.
pub const NULL_VARIANT_LABEL: &str = "null";

/// The longest label the draft allows (`^[0-9a-z_.]{1,16}$`).
pub const MAX_VARIANT_LABEL: usize = 16;

fn all_chars(s: &str, extra: &[char]) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || c == '_' || extra.contains(&c))
}

/// Validates a variant label: 1-16 of `0-9 a-z _ .`.
pub fn validate_variant_label(label: &str) -> Result<()> {
    if !all_chars(label, &['.']) || label.len() > MAX_VARIANT_LABEL {
        bail!(
            "invalid variant label {label:?}: a label is 1 to {MAX_VARIANT_LABEL} characters of \
             0-9, a-z, '_' and '.' (^[0-9a-z_.]{{1,16}}$, PEP 825 draft), e.g. rocm"
        );
    }
    Ok(())
}

/// Validates a variant namespace or feature name (`^[a-z0-9_]+$`).
pub fn validate_variant_key(what: &str, key: &str) -> Result<()> {
    if !all_chars(key, &[]) {
        bail!("invalid variant {what} {key:?}: it is 0-9, a-z and '_' only (PEP 825 draft)");
    }
    Ok(())
}

/// Validates a variant feature value (`^[a-z0-9_.]+$`: no hyphen, so a
/// generic target such as `gfx12-generic` is no value).
pub fn validate_variant_value(value: &str) -> Result<()> {
    if !all_chars(value, &['.']) {
        bail!(
            "invalid variant property value {value:?}: a value is 0-9, a-z, '_' and '.' only \
             (PEP 825 draft; no '-')"
        );
    }
    Ok(())
}

/// Splits `namespace :: feature[ :: value]` (whitespace around `::`
/// ignored, as the draft asks) into its 2 or 3 parts, each validated;
/// `parts` is 2 for a feature, 3 for a property.
pub fn parse_variant_path(s: &str, parts: usize) -> Result<Vec<String>> {
    let got: Vec<String> = s.split("::").map(|p| p.trim().to_string()).collect();
    let shape = if parts == 2 {
        "namespace :: feature"
    } else {
        "namespace :: feature :: value"
    };
    if got.len() != parts {
        bail!("{s:?} is not a variant {shape}");
    }
    validate_variant_key("namespace", &got[0])?;
    validate_variant_key("feature name", &got[1])?;
    if parts == 3 {
        validate_variant_value(&got[2])?;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        for ok in ["rocm", "null", "0", "a.b_c", "abcdefghijklmnop"] {
            validate_variant_label(ok).unwrap();
        }
        for bad in ["", "Rocm", "ro-cm", "abcdefghijklmnopq", "rocm gfx", "ä"] {
            let e = validate_variant_label(bad).unwrap_err().to_string();
            assert!(e.contains("invalid variant label"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn properties() {
        assert_eq!(
            parse_variant_path("amd :: gfx_arch :: gfx1201", 3).unwrap(),
            ["amd", "gfx_arch", "gfx1201"]
        );
        assert_eq!(
            parse_variant_path("amd::gfx_arch", 2).unwrap(),
            ["amd", "gfx_arch"]
        );
        for (bad, n, why) in [
            ("amd :: gfx_arch :: gfx12-generic", 3, "no '-'"),
            ("amd :: gfx_arch", 3, "is not a variant"),
            ("AMD :: gfx_arch :: gfx1201", 3, "invalid variant namespace"),
            ("amd :: gfx.arch", 2, "invalid variant feature name"),
            ("amd :: gfx_arch :: ", 3, "invalid variant property value"),
        ] {
            let e = parse_variant_path(bad, n).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
