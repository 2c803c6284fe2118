//! Finding a wheel's `.dist-info` directory among its member names, and
//! naming the files in it.

/// Why a wheel's members name no single `.dist-info` directory. Readers word
/// the message for their own output (`check` names the file), so the cases
/// are kept apart; the `Display` text is `inspect`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DistInfoError {
    /// No top-level `*.dist-info/WHEEL`: a zip, but not a wheel.
    Missing,
    /// Several top-level `*.dist-info/WHEEL`: these stems, in member order.
    Several(Vec<String>),
}

impl std::fmt::Display for DistInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DistInfoError::Missing => write!(
                f,
                "a zip archive but not a wheel: no top-level *.dist-info/WHEEL \
                 (build it with a wheel builder such as `rocm-wheel build`)"
            ),
            DistInfoError::Several(stems) => write!(
                f,
                "not a valid wheel: several .dist-info directories ({})",
                stems.join(", ")
            ),
        }
    }
}

impl std::error::Error for DistInfoError {}

/// The stem of the wheel's `.dist-info` directory (`{name}-{version}`,
/// without the suffix), from its member names: exactly one top-level
/// `*.dist-info` holding `WHEEL`, which is how installers find it.
pub fn find_dist_info<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Result<String, DistInfoError> {
    let stems: Vec<&str> = names
        .into_iter()
        .filter_map(|n| n.strip_suffix(".dist-info/WHEEL"))
        .filter(|d| !d.contains('/'))
        .collect();
    match stems.as_slice() {
        [d] => Ok(d.to_string()),
        [] => Err(DistInfoError::Missing),
        many => Err(DistInfoError::Several(
            many.iter().map(|s| s.to_string()).collect(),
        )),
    }
}

/// The member `file` (`WHEEL`, `METADATA`, `RECORD`, ...) of the
/// `.dist-info` directory with stem `stem`.
pub fn dist_info_path(stem: &str, file: &str) -> String {
    format!("{stem}.dist-info/{file}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_top_level_dist_info() {
        let names = [
            "p/__init__.py",
            "p-1.dist-info/WHEEL",
            "p-1.dist-info/RECORD",
        ];
        assert_eq!(find_dist_info(names).unwrap(), "p-1");
        // Nested ones and other files do not count.
        let names = ["x/p-1.dist-info/WHEEL", "p-1.dist-info/METADATA"];
        assert_eq!(find_dist_info(names), Err(DistInfoError::Missing));
        let e = DistInfoError::Missing.to_string();
        assert!(
            e.contains("not a wheel: no top-level *.dist-info/WHEEL"),
            "{e}"
        );
        let names = ["b-1.dist-info/WHEEL", "a-1.dist-info/WHEEL"];
        let e = find_dist_info(names).unwrap_err();
        assert_eq!(e, DistInfoError::Several(vec!["b-1".into(), "a-1".into()]));
        assert!(e
            .to_string()
            .contains("several .dist-info directories (b-1, a-1)"));
        assert_eq!(dist_info_path("p-1", "RECORD"), "p-1.dist-info/RECORD");
    }
}
