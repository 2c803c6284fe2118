//! Where ROCm's shared libraries are installed, seen from a wheel: TheRock's
//! pip SDK next to site-packages (`rocm-sdk-core` in `_rocm_sdk_core/lib`,
//! `rocm-sdk-libraries[-<family>]` in `_rocm_sdk_libraries[_<family>]/lib`)
//! and an `/opt/rocm` install. One table for the RUNPATH a built ELF file
//! gets ([`rocm_runpath`]), for the entries `repair` keeps
//! ([`is_rocm_sdk_dir`]) and for the SDK packages a built wheel requires
//! ([`sdk_requirements`]).

mod packages;
mod requirements;

use std::path::Path;

use anyhow::{Context, Result};

pub use packages::{sdk_package, SdkPackage};
pub use requirements::{sdk_requirements, SdkRequest};

/// The ROCm install outside any Python environment.
pub const OPT_ROCM_LIB: &str = "/opt/rocm/lib";

/// The directory (relative to site-packages) of a package's libraries;
/// `family` is a TheRock family name (`gfx120X-all`) for the per-family
/// libraries package, `None` for the multi-arch one.
pub fn sdk_dir(package: SdkPackage, family: Option<&str>) -> String {
    match (package, family) {
        (SdkPackage::Core, _) => "_rocm_sdk_core/lib".to_string(),
        (SdkPackage::Libraries, None) => "_rocm_sdk_libraries/lib".to_string(),
        (SdkPackage::Libraries, Some(f)) => {
            format!("_rocm_sdk_libraries_{}/lib", f.replace('-', "_"))
        }
    }
}

/// Whether `rel` (relative to site-packages) is one of TheRock's SDK
/// library directories: `_rocm_sdk_core/lib`, `_rocm_sdk_libraries/lib`,
/// `_rocm_sdk_libraries_<family>/lib`.
pub fn is_rocm_sdk_dir(rel: &str) -> bool {
    match rel.strip_suffix("/lib") {
        Some("_rocm_sdk_core") | Some("_rocm_sdk_libraries") => true,
        Some(d) => d.strip_prefix("_rocm_sdk_libraries_").is_some_and(|f| {
            !f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }),
        None => false,
    }
}

/// The RUNPATH entries that find each ROCm library in `needed` in every
/// supported layout, for an ELF file installed in `dir` (relative to
/// site-packages, `/`-separated, "" for site-packages itself): the SDK
/// directories its libraries live in, `$ORIGIN`-relative, for the
/// multi-arch and each of `families`' libraries packages, then
/// `/opt/rocm/lib`. Empty when it needs no ROCm library.
pub fn rocm_runpath(needed: &[String], dir: &str, families: &[String]) -> Vec<String> {
    let mut packages: Vec<SdkPackage> = needed.iter().filter_map(|n| sdk_package(n)).collect();
    packages.sort();
    packages.dedup();
    if packages.is_empty() {
        return Vec::new();
    }
    let depth = dir.split('/').filter(|c| !c.is_empty()).count();
    let up = format!("$ORIGIN{}", "/..".repeat(depth));
    let mut entries = Vec::new();
    for package in packages {
        let mut dirs = vec![sdk_dir(package, None)];
        if package == SdkPackage::Libraries {
            dirs.extend(families.iter().map(|f| sdk_dir(package, Some(f))));
        }
        entries.extend(dirs.into_iter().map(|d| format!("{up}/{d}")));
    }
    entries.push(OPT_ROCM_LIB.to_string());
    entries
}

/// `existing` entries that are not ROCm's (the wheel's own `$ORIGIN/lib`,
/// …), each once, then `rocm` (from [`rocm_runpath`]). An existing SDK or
/// `/opt/rocm/lib` entry is dropped: `rocm` says which ones the file needs.
pub fn merge_runpath(existing: &[String], rocm: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in existing {
        let is_rocm = e == OPT_ROCM_LIB
            || e.rsplit_once("../")
                .map(|(_, rest)| rest)
                .or_else(|| e.strip_prefix("$ORIGIN/"))
                .is_some_and(is_rocm_sdk_dir);
        if !e.is_empty() && !is_rocm && !out.contains(e) {
            out.push(e.clone());
        }
    }
    for e in rocm {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

/// Sets the RUNPATH of the ELF file `input` (installed in `dir`, relative
/// to site-packages) to its own entries (`base` when given, replacing
/// them) plus [`rocm_runpath`] of what it needs, into `output` (atomically;
/// `input` itself when `None`). Returns the entries written; a file whose
/// entries stay the same is copied unchanged.
pub fn set_rocm_runpath(
    input: &Path,
    output: Option<&Path>,
    dir: &str,
    families: &[String],
    base: Option<&[String]>,
) -> Result<Vec<String>> {
    let file = std::fs::File::open(input).with_context(|| format!("{}", input.display()))?;
    let src = elf_read::FileSource::new(file)?;
    let facts = elf_read::dynamic_facts(&src)
        .with_context(|| format!("{}: not a readable ELF file", input.display()))?;
    let existing: Vec<String> = facts.runpath.iter().chain(&facts.rpath).cloned().collect();
    let own = base.unwrap_or(&existing);
    let entries = merge_runpath(own, &rocm_runpath(&facts.needed, dir, families));
    let edit = if entries.is_empty() {
        elf_edit::Edit::Remove
    } else {
        elf_edit::Edit::Set {
            rpath: entries.join(":").into_bytes(),
            kind: elf_edit::RpathKind::Runpath,
        }
    };
    if entries == existing {
        if let Some(out) = output {
            std::fs::copy(input, out).with_context(|| format!("{}", out.display()))?;
        }
        return Ok(entries);
    }
    elf_edit::edit_file(input, output, &edit)?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn runpath_follows_what_is_needed_and_the_depth() {
        let hip = strings(&["libamdhip64.so.7", "libc.so.6"]);
        assert_eq!(
            rocm_runpath(&hip, "jax_rocm7_plugin", &strings(&["gfx120X-all"])),
            strings(&["$ORIGIN/../_rocm_sdk_core/lib", "/opt/rocm/lib"])
        );
        let blas = strings(&["libhipblas.so.3", "libamdhip64.so.7"]);
        assert_eq!(
            rocm_runpath(
                &blas,
                "jax_plugins/xla_rocm7",
                &strings(&["gfx120X-all", "gfx94X-dcgpu"])
            ),
            strings(&[
                "$ORIGIN/../../_rocm_sdk_core/lib",
                "$ORIGIN/../../_rocm_sdk_libraries/lib",
                "$ORIGIN/../../_rocm_sdk_libraries_gfx120X_all/lib",
                "$ORIGIN/../../_rocm_sdk_libraries_gfx94X_dcgpu/lib",
                "/opt/rocm/lib",
            ])
        );
        assert_eq!(
            rocm_runpath(&strings(&["libc.so.6"]), "a", &[]),
            Vec::<String>::new()
        );
        assert_eq!(
            rocm_runpath(&hip, "", &[]),
            strings(&["$ORIGIN/_rocm_sdk_core/lib", "/opt/rocm/lib"])
        );
    }

    #[test]
    fn merge_keeps_own_entries_and_recomputes_rocm_ones() {
        let existing = strings(&[
            "$ORIGIN/lib",
            "$ORIGIN/../_rocm_sdk_libraries_gfx90a/lib",
            "/opt/rocm/lib",
            "",
            "$ORIGIN/lib",
        ]);
        let rocm = strings(&["$ORIGIN/../_rocm_sdk_core/lib", "/opt/rocm/lib"]);
        assert_eq!(
            merge_runpath(&existing, &rocm),
            strings(&[
                "$ORIGIN/lib",
                "$ORIGIN/../_rocm_sdk_core/lib",
                "/opt/rocm/lib"
            ])
        );
    }

    #[test]
    fn sdk_dirs() {
        assert!(is_rocm_sdk_dir("_rocm_sdk_core/lib"));
        assert!(is_rocm_sdk_dir("_rocm_sdk_libraries_gfx94X_dcgpu/lib"));
        assert!(!is_rocm_sdk_dir("_rocm_sdk_libraries_/lib"));
        assert!(!is_rocm_sdk_dir("_rocm_sdk_core/lib/x"));
        assert!(!is_rocm_sdk_dir("_rocm_sdk_libraries_gfx120X-all/lib"));
    }
}
