//! Wheel file names (`{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`,
//! PEP 427, and the PEP 825 draft's variant wheels, `...-{platform}-{label}.whl`),
//! read the same way by `check`, `inspect`, `thin` and `index`.

use anyhow::{bail, Context, Result};

use crate::variant::validate_variant_label;

/// The parts of a wheel file name, as spelled in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub build: Option<&'a str>,
    pub python: &'a str,
    pub abi: &'a str,
    /// The platform tag set, e.g. `manylinux_2_17_x86_64.manylinux2014_x86_64`.
    pub platform: &'a str,
    /// A variant wheel's label (`rocm`); `None` for a plain wheel.
    pub variant: Option<&'a str>,
}

impl<'a> WheelName<'a> {
    /// Splits `filename`; an error says what a wheel name looks like.
    pub fn parse(filename: &'a str) -> Result<Self> {
        let stem = filename.strip_suffix(".whl").with_context(|| {
            format!("`{filename}` does not end in .whl; wheel files are named NAME-VERSION-PY-ABI-PLATFORM.whl")
        })?;
        let parts: Vec<&str> = stem.split('-').collect();
        let not_wheel = || {
            format!(
                "`{filename}` is not a wheel file name \
                 (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM[-VARIANT_LABEL].whl)"
            )
        };
        // Six parts are a build tag or a variant label: a build tag starts
        // with a digit, a Python tag never does.
        let has_build = |b: &str| b.starts_with(|c: char| c.is_ascii_digit());
        let (name, version, build, tags, variant) = match parts.as_slice() {
            [n, v, tags @ ..] if tags.len() == 3 => (*n, *v, None, tags, None),
            [n, v, b, tags @ ..] if tags.len() == 3 && has_build(b) => {
                (*n, *v, Some(*b), tags, None)
            }
            [n, v, tags @ .., l] if tags.len() == 3 => (*n, *v, None, tags, Some(*l)),
            [n, v, b, tags @ .., l] if tags.len() == 3 => (*n, *v, Some(*b), tags, Some(*l)),
            _ => bail!(not_wheel()),
        };
        // A Python tag (py3, cp312) never starts with a digit.
        if parts.iter().any(|p| p.is_empty())
            || build.is_some_and(|b| !has_build(b))
            || has_build(tags[0])
        {
            bail!(not_wheel());
        }
        if let Some(label) = variant {
            validate_variant_label(label).with_context(not_wheel)?;
        }
        Ok(WheelName {
            name,
            version,
            build,
            python: tags[0],
            abi: tags[1],
            platform: tags[2],
            variant,
        })
    }

    /// The platform tags of the name's (possibly compressed) tag set.
    pub fn platform_tags(&self) -> Vec<String> {
        self.platform.split('.').map(str::to_string).collect()
    }
}

/// The file name again, exactly as parsed (with a field changed, e.g. the
/// name of a renamed distribution).
impl std::fmt::Display for WheelName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-", self.name, self.version)?;
        if let Some(b) = self.build {
            write!(f, "{b}-")?;
        }
        write!(f, "{}-{}-{}", self.python, self.abi, self.platform)?;
        if let Some(label) = self.variant {
            write!(f, "-{label}")?;
        }
        f.write_str(".whl")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        let w =
            WheelName::parse("a-1.0-1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
                .unwrap();
        assert_eq!(
            (w.name, w.version, w.build, w.python, w.abi),
            ("a", "1.0", Some("1"), "cp312", "cp312")
        );
        assert_eq!(
            w.platform_tags(),
            ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]
        );
        let w =
            WheelName::parse("jax_rocm7_pjrt-0.6.0-py3-none-manylinux_2_28_x86_64.whl").unwrap();
        assert_eq!(
            (w.name, w.version, w.build),
            ("jax_rocm7_pjrt", "0.6.0", None)
        );
        for good in [
            "a-1.0-1-py3-none-any.whl",
            "jax_rocm7_pjrt-0.6.0-py3-none-manylinux_2_28_x86_64.whl",
        ] {
            assert_eq!(WheelName::parse(good).unwrap().to_string(), good);
        }
        let renamed = WheelName {
            name: "b_gfx",
            ..WheelName::parse("a-1.0-py3-none-any.whl").unwrap()
        };
        assert_eq!(renamed.to_string(), "b_gfx-1.0-py3-none-any.whl");
        for bad in [
            "foo-1.0.whl",
            "foo-1.0-py3-none-any.zip",
            "foo--py3-none-any.whl",
            "a-1-2-3-py3-none-any.whl",
            "a-1-x2-py3-none-any-rocm.whl",
            "a-1-py3-none-any-Rocm.whl",
            "a-1-py3-none-any-gfx1200.gfx1201.gfx1100.whl",
        ] {
            assert!(WheelName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn variant_labels() {
        let w =
            WheelName::parse("jax_rocm7_plugin-0.10.2-cp312-cp312-manylinux_2_28_x86_64-rocm.whl")
                .unwrap();
        assert_eq!(
            (w.python, w.platform, w.build, w.variant),
            ("cp312", "manylinux_2_28_x86_64", None, Some("rocm"))
        );
        let w = WheelName::parse("a-1.0-2-py3-none-any-null.whl").unwrap();
        assert_eq!((w.build, w.variant), (Some("2"), Some("null")));
        // Six parts: a build tag starts with a digit, a label may not.
        let w = WheelName::parse("a-1.0-2x-py3-none-any.whl").unwrap();
        assert_eq!((w.build, w.variant), (Some("2x"), None));
        for good in [
            "a-1.0-py3-none-any-rocm.whl",
            "a-1.0-1-py3-none-any-0.x_y.whl",
        ] {
            assert_eq!(WheelName::parse(good).unwrap().to_string(), good);
        }
        let e = format!(
            "{:#}",
            WheelName::parse("a-1-py3-none-any-ro.cm-x.whl").unwrap_err()
        );
        assert!(e.contains("VARIANT_LABEL"), "{e}");
        let e = format!(
            "{:#}",
            WheelName::parse("a-1-py3-none-any-ROCM.whl").unwrap_err()
        );
        assert!(e.contains("invalid variant label"), "{e}");
    }
}
