//! CPython extension modules' file-name suffixes against a wheel's ABI
//! tags. The suffix decides which interpreter imports a module:
//! `m.cpython-314t-x86_64-linux-gnu.so` only a free-threaded 3.14 (ABI tag
//! `cp314t`), `m.cpython-314-x86_64-linux-gnu.so` only 3.14 with the GIL
//! (`cp314`), and `m.abi3.so` no free-threaded CPython (the stable ABI has
//! no free-threaded form before 3.15). A module whose suffix disagrees with
//! the wheel's tag installs fine and then fails to import.

/// The ABI an extension module's file name says it was built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtensionAbi {
    /// `.cpython-<XY><flags>-<multiarch>.so`: the ABI tag `cp<XY><flags>`,
    /// e.g. `cp314t`.
    Cpython(String),
    /// `.abi3.so`: the stable ABI.
    Abi3,
}

/// The ABI `member`'s name gives it, if it is named as a CPython extension
/// module (`None` for every other file).
pub fn extension_abi(member: &str) -> Option<ExtensionAbi> {
    let base = member.rsplit('/').next()?;
    let stem = base.strip_suffix(".so")?;
    if let Some(module) = stem.strip_suffix(".abi3") {
        return (!module.is_empty()).then_some(ExtensionAbi::Abi3);
    }
    let (module, soabi) = stem.rsplit_once(".cpython-")?;
    // soabi: 314t-x86_64-linux-gnu
    let (version_flags, multiarch) = soabi.split_once('-')?;
    let digits = version_flags.bytes().take_while(u8::is_ascii_digit).count();
    let flags = &version_flags[digits..];
    let well_formed = !module.is_empty()
        && digits >= 2
        && !multiarch.is_empty()
        && flags.bytes().all(|b| b.is_ascii_lowercase());
    well_formed.then(|| ExtensionAbi::Cpython(format!("cp{version_flags}")))
}

/// A CPython ABI tag of one version (`cp314`, `cp314t`), as opposed to
/// `abi3`, `none` or another interpreter's.
fn is_cpython_abi(tag: &str) -> bool {
    tag.strip_prefix("cp")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// A free-threaded CPython's ABI tag: `cp` and a version, then `t`
/// (`cp313t`, `cp314t`).
pub fn is_free_threaded_abi(tag: &str) -> bool {
    tag.strip_prefix("cp")
        .and_then(|rest| rest.strip_suffix('t'))
        .is_some_and(|v| v.len() >= 2 && v.bytes().all(|b| b.is_ascii_digit()))
}

fn described(tag: &str) -> String {
    if tag.ends_with('t') {
        format!("{tag}, free-threaded")
    } else {
        format!("{tag}, with the GIL")
    }
}

/// Why extension module `member` does not belong in a wheel whose name's ABI
/// tag is `tagged` (`cp314`, or a compressed set such as `cp314.cp314t`),
/// or `None` when it does, or when the tags name no CPython ABI to hold it
/// to (`none`, another interpreter's).
pub fn extension_abi_problem(member: &str, tagged: &str) -> Option<String> {
    let abi = extension_abi(member)?;
    let cpython: Vec<&str> = tagged.split('.').filter(|t| is_cpython_abi(t)).collect();
    match abi {
        ExtensionAbi::Cpython(tag) => {
            if cpython.contains(&tag.as_str()) {
                return None;
            }
            if cpython.is_empty() && !tagged.split('.').any(|t| t == "abi3") {
                return None;
            }
            Some(format!(
                "is an extension module for {}, in a wheel whose ABI tag is {tagged}: the interpreters the tag admits will not import it",
                described(&tag)
            ))
        }
        ExtensionAbi::Abi3 => {
            let all_free_threaded = !cpython.is_empty() && cpython.iter().all(|t| t.ends_with('t'));
            all_free_threaded.then(|| {
                format!(
                    "is a stable-ABI (abi3) module, which no free-threaded CPython imports, in a wheel whose ABI tag is {tagged}"
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        let abi = |s: &str| extension_abi(s);
        assert_eq!(
            abi("pkg/_m.cpython-314t-x86_64-linux-gnu.so"),
            Some(ExtensionAbi::Cpython("cp314t".into()))
        );
        assert_eq!(
            abi("_m.cpython-312-aarch64-linux-gnu.so"),
            Some(ExtensionAbi::Cpython("cp312".into()))
        );
        assert_eq!(abi("pkg/_m.abi3.so"), Some(ExtensionAbi::Abi3));
        for not_a_module in [
            "pkg/lib/libfoo.so",
            "pkg/_m.so",
            "pkg/.cpython-314-x86_64-linux-gnu.so",
            "pkg/_m.cpython-3-x86_64-linux-gnu.so",
            "pkg/_m.cpython-314T-x86_64-linux-gnu.so",
            "pkg/_m.cpython-314t.so",
            "pkg/.abi3.so",
            "pkg/_m.cpython-314t-x86_64-linux-gnu.so.1",
        ] {
            assert_eq!(abi(not_a_module), None, "{not_a_module}");
        }
    }

    #[test]
    fn free_threaded_wheels() {
        let ft = "pkg/_m.cpython-314t-x86_64-linux-gnu.so";
        let gil = "pkg/_m.cpython-314-x86_64-linux-gnu.so";
        assert_eq!(extension_abi_problem(ft, "cp314t"), None);
        assert_eq!(extension_abi_problem(gil, "cp314"), None);
        let wrong = extension_abi_problem(gil, "cp314t").unwrap();
        assert!(
            wrong.contains("cp314, with the GIL") && wrong.contains("ABI tag is cp314t"),
            "{wrong}"
        );
        let wrong = extension_abi_problem(ft, "cp314").unwrap();
        assert!(
            wrong.contains("cp314t, free-threaded") && wrong.contains("ABI tag is cp314"),
            "{wrong}"
        );
        // A compressed tag set admits either.
        assert_eq!(extension_abi_problem(gil, "cp314.cp314t"), None);
        assert!(extension_abi_problem("pkg/_m.abi3.so", "cp314t").is_some());
        assert_eq!(extension_abi_problem("pkg/_m.abi3.so", "cp314"), None);
        assert_eq!(extension_abi_problem("pkg/_m.abi3.so", "abi3"), None);
        // A version-specific module in an abi3 wheel.
        assert!(extension_abi_problem(gil, "abi3").is_some());
        assert!(is_free_threaded_abi("cp314t") && is_free_threaded_abi("cp313t"));
        for not_ft in ["cp314", "abi3", "none", "cpt", "cp3t", "pp310t", "cp314td"] {
            assert!(!is_free_threaded_abi(not_ft), "{not_ft}");
        }
        // Nothing to hold it to, and files that are no modules.
        assert_eq!(extension_abi_problem(gil, "none"), None);
        assert_eq!(extension_abi_problem("pkg/lib/libk.so", "cp314t"), None);
    }
}
