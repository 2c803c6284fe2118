//! Reading METADATA: the wheel's identity (its Name and Version against the
//! file and directory names), and the bounded read of a text member.

use anyhow::{bail, Context, Result};

use crate::headers::Headers;
use crate::names::normalize_name;
use crate::wheel_name::WheelName;

/// Name and version from METADATA, checked against the wheel's file name
/// and its `.dist-info` stem `dist` (`check`, `inspect` and `thin` agree on
/// this: pip refuses a wheel whose names disagree).
pub fn wheel_identity(filename: &str, dist: &str, metadata: &str) -> Result<(String, String)> {
    let metadata = Headers::parse("METADATA", metadata);
    let WheelName {
        name: fname_name,
        version: fname_version,
        ..
    } = WheelName::parse(filename)?;
    let name = metadata.require("Name")?.to_string();
    let version = metadata.require("Version")?.to_string();
    // File names spell `-` in versions as `_` (PEP 427 escaping).
    if normalize_name(fname_name) != normalize_name(&name)
        || fname_version != version.replace('-', "_")
    {
        bail!(
            "file name says {fname_name} {fname_version} but METADATA says {name} {version}; \
             rename the file or fix METADATA"
        );
    }
    if normalize_name(dist) != normalize_name(&format!("{name}-{version}")) {
        bail!(
            "dist-info directory `{dist}.dist-info` does not match {name} {version} from METADATA; \
             it must be `{}-{version}.dist-info`",
            normalize_name(&name)
        );
    }
    Ok((name, version))
}

/// Largest text member (WHEEL, METADATA, RECORD) read into memory.
pub const MAX_TEXT_MEMBER: u64 = 64 << 20;

/// Reads the text member `member` from `r` (its decompressed bytes),
/// refusing more than [`MAX_TEXT_MEMBER`] bytes (whatever its header
/// claims) so a bomb cannot fill memory.
pub fn read_text_member(member: &str, r: impl std::io::Read) -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    r.take(MAX_TEXT_MEMBER + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {member}: the zip entry is corrupt"))?;
    if bytes.len() as u64 > MAX_TEXT_MEMBER {
        bail!(
            "{member} is larger than {} MiB; that is not a real wheel metadata file",
            MAX_TEXT_MEMBER >> 20
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{member} is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_checked_against_both_names() {
        let m = "Metadata-Version: 2.1\nName: Jax.ROCm7-pjrt\nVersion: 1.0-1\n";
        let f = "jax_rocm7_pjrt-1.0_1-py3-none-any.whl";
        let (n, v) = wheel_identity(f, "jax_rocm7_pjrt-1.0_1", m).unwrap();
        assert_eq!((n.as_str(), v.as_str()), ("Jax.ROCm7-pjrt", "1.0-1"));
        let e = wheel_identity("other-1.0_1-py3-none-any.whl", "x", m).unwrap_err();
        assert!(
            e.to_string()
                .contains("file name says other 1.0_1 but METADATA says"),
            "{e}"
        );
        let e = wheel_identity(f, "jax_rocm7_pjrt-2", m)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("it must be `jax_rocm7_pjrt-1.0-1.dist-info`"),
            "{e}"
        );
        for (bad, want) in [
            ("Version: 1\n", "METADATA has no Name field"),
            ("Name: x\n", "METADATA has no Version field"),
            ("\nName: x\nVersion: 1\n", "METADATA has no Name field"),
            ("Name x\nVersion 1\n", "METADATA has no Name field"),
        ] {
            let e = wheel_identity("x-1-py3-none-any.whl", "x-1", bad).unwrap_err();
            assert_eq!(e.to_string(), want, "{bad:?}");
        }
        let e = wheel_identity("x.whl", "x-1", m).unwrap_err().to_string();
        assert!(e.contains("not a wheel file name"), "{e}");
    }
}
