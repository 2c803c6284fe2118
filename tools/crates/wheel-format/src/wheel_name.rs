//! Wheel file names (`{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`,
//! PEP 427), read the same way by `check`, `inspect` and `thin`.

use anyhow::{bail, Context, Result};

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
}

impl<'a> WheelName<'a> {
    /// Splits `filename`; an error says what a wheel name looks like.
    pub fn parse(filename: &'a str) -> Result<Self> {
        let stem = filename.strip_suffix(".whl").with_context(|| {
            format!("`{filename}` does not end in .whl; wheel files are named NAME-VERSION-PY-ABI-PLATFORM.whl")
        })?;
        let parts: Vec<&str> = stem.split('-').collect();
        let (name, version, build, tags) = match parts.as_slice() {
            [n, v, tags @ ..] if tags.len() == 3 => (*n, *v, None, tags),
            [n, v, b, tags @ ..] if tags.len() == 3 => (*n, *v, Some(*b), tags),
            _ => bail!(
                "`{filename}` is not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)"
            ),
        };
        if parts.iter().any(|p| p.is_empty()) {
            bail!(
                "`{filename}` is not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)"
            );
        }
        Ok(WheelName {
            name,
            version,
            build,
            python: tags[0],
            abi: tags[1],
            platform: tags[2],
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
        write!(f, "{}-{}-{}.whl", self.python, self.abi, self.platform)
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
        ] {
            assert!(WheelName::parse(bad).is_err(), "{bad}");
        }
    }
}
