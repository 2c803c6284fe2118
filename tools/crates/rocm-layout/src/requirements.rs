//! `Requires-Dist` for TheRock's pip SDK, from what a wheel's ELF files
//! need: `rocm-sdk-core` when one needs the HIP runtime (or another core
//! library), `rocm-sdk-libraries-<family>` per gfx family when one needs a
//! math or ML library, each `~=` the toolkit's ROCm version, under an extra
//! (`pip install jax-rocm7-plugin[rocm]`): users with a system ROCm leave
//! it out. Built against a TheRock SDK release, the wheel pins that
//! release through TheRock's selector instead, as AMD's torch does:
//! `rocm[libraries]==7.13.0a20261201` (`rocm==...` for core libraries only).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context, Result};
use elf_read::raw::ELFMAG as ELF_MAGIC;

use crate::packages::{sdk_package, SdkPackage};

/// What a `build` manifest's `rocm_sdk` object asks for.
#[derive(Debug, Clone, Copy)]
pub struct SdkRequest<'a> {
    /// The extra the requirements are under (`rocm`).
    pub extra: &'a str,
    /// The toolkit's ROCm version, `major.minor` (`7.2`).
    pub version: &'a str,
    /// TheRock gfx families of the build (`gfx120X-all`).
    pub families: &'a [String],
    /// The TheRock SDK release the toolkit is, if it is one.
    pub sdk_version: Option<&'a str>,
}

/// The requirements (each with the marker `extra == "<extra>"`) for the
/// ROCm libraries that the ELF files among `files` need (their DT_NEEDED);
/// files that are not ELF are skipped.
pub fn sdk_requirements<P: AsRef<Path>>(
    files: impl IntoIterator<Item = P>,
    sdk: &SdkRequest,
) -> Result<Vec<String>> {
    let mut packages = BTreeSet::new();
    for f in files {
        for soname in needed(f.as_ref())? {
            packages.extend(sdk_package(&soname));
        }
    }
    let marker = format!("extra == \"{}\"", sdk.extra);
    if let Some(release) = sdk.sdk_version {
        // The selector resolves core and libraries for its own layout
        // (multi-arch with device packages, or a family's).
        return Ok(match packages.last() {
            None => Vec::new(),
            Some(SdkPackage::Core) => vec![format!("rocm=={release}; {marker}")],
            Some(SdkPackage::Libraries) => vec![format!("rocm[libraries]=={release}; {marker}")],
        });
    }
    let version = compatible_version(sdk.version)?;
    let mut requires = Vec::new();
    for package in packages {
        match package {
            SdkPackage::Core => requires.push(format!("rocm-sdk-core~={version}; {marker}")),
            SdkPackage::Libraries => {
                if sdk.families.is_empty() {
                    bail!("a file needs a ROCm math library (rocm-sdk-libraries-<family>), but --//:gfx names no TheRock family (gfx120X-all, gfx94X-dcgpu, ...) to name the package by; build for a family, or drop rocm_sdk_extra");
                }
                for family in sdk.families {
                    requires.push(format!("rocm-sdk-libraries-{family}~={version}; {marker}"));
                }
            }
        }
    }
    Ok(requires)
}

/// `7.2` -> `7.2.0`: `~=7.2.0` allows 7.2.x, not 7.3 (ROCm's ABI changes
/// with the minor version).
fn compatible_version(v: &str) -> Result<String> {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() < 2
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
    {
        bail!("rocm_sdk.version {v:?} is not major.minor[.patch] (the toolkit's $(ROCM_VERSION), e.g. 7.2)");
    }
    Ok(if parts.len() == 2 {
        format!("{v}.0")
    } else {
        v.to_string()
    })
}

/// The DT_NEEDED of `src`; none if it is not an ELF file.
fn needed(src: &Path) -> Result<Vec<String>> {
    let file =
        std::fs::File::open(src).with_context(|| format!("cannot open {}", src.display()))?;
    let source = elf_read::FileSource::new(file)?;
    let mut magic = [0u8; 4];
    if source.len < 4 {
        return Ok(Vec::new());
    }
    std::os::unix::fs::FileExt::read_exact_at(&source.file, &mut magic, 0)?;
    if &magic != ELF_MAGIC {
        return Ok(Vec::new());
    }
    let facts = elf_read::dynamic_facts(&source)
        .with_context(|| format!("{}: unreadable ELF file", src.display()))?;
    Ok(facts.needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(compatible_version("7.2").unwrap(), "7.2.0");
        assert_eq!(compatible_version("6.4.3").unwrap(), "6.4.3");
        assert!(compatible_version("7").is_err());
        assert!(compatible_version("7.x").is_err());
    }

    #[test]
    fn requirements_follow_the_needed_libraries() {
        let dir = tempfile::tempdir().unwrap();
        let hip = test_support_elf(dir.path(), &["libamdhip64.so.7", "libhipblas.so.3"]);
        let text = dir.path().join("a.py");
        std::fs::write(&text, "print()\n").unwrap();
        let families = ["gfx120X-all".to_string(), "gfx94X-dcgpu".to_string()];
        let sdk = SdkRequest {
            extra: "rocm",
            version: "7.2",
            families: &families,
            sdk_version: None,
        };
        assert_eq!(
            sdk_requirements([&hip, &text], &sdk).unwrap(),
            [
                "rocm-sdk-core~=7.2.0; extra == \"rocm\"",
                "rocm-sdk-libraries-gfx120X-all~=7.2.0; extra == \"rocm\"",
                "rocm-sdk-libraries-gfx94X-dcgpu~=7.2.0; extra == \"rocm\"",
            ]
        );
        assert!(sdk_requirements([&text], &sdk).unwrap().is_empty());
        let e = sdk_requirements(
            [&hip],
            &SdkRequest {
                families: &[],
                ..sdk
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("names no TheRock family"), "{e}");
        // Against a TheRock SDK release: that release, through the selector.
        let pinned = SdkRequest {
            sdk_version: Some("7.13.0a20261201"),
            ..sdk
        };
        assert_eq!(
            sdk_requirements([&hip, &text], &pinned).unwrap(),
            ["rocm[libraries]==7.13.0a20261201; extra == \"rocm\""]
        );
        std::fs::create_dir(dir.path().join("core")).unwrap();
        let core = test_support_elf(&dir.path().join("core"), &["libamdhip64.so.7"]);
        assert_eq!(
            sdk_requirements([&core], &pinned).unwrap(),
            ["rocm==7.13.0a20261201; extra == \"rocm\""]
        );
        let e = sdk_requirements([dir.path().join("gone.so")], &sdk).unwrap_err();
        assert!(format!("{e:#}").contains("cannot open"), "{e:#}");
    }

    /// A shared library linked by the system's cc with these DT_NEEDED.
    fn test_support_elf(dir: &Path, needed: &[&str]) -> std::path::PathBuf {
        let mut args = vec!["-shared".to_string(), "-nostdlib".to_string(), "-o".into()];
        let out = dir.join("x.so");
        args.push(out.display().to_string());
        args.push("-xc".into());
        args.push("/dev/null".into());
        for n in needed {
            args.push(format!("-Wl,--no-as-needed,--allow-shlib-undefined,-l:{n}"));
            let stub = dir.join(n);
            let status = std::process::Command::new("cc")
                .args(["-shared", "-nostdlib", "-xc", "/dev/null", "-o"])
                .arg(&stub)
                .arg(format!("-Wl,-soname,{n}"))
                .status()
                .unwrap();
            assert!(status.success());
        }
        args.push(format!("-L{}", dir.display()));
        let status = std::process::Command::new("cc")
            .args(&args)
            .status()
            .unwrap();
        assert!(status.success());
        out
    }
}
