//! Reading a wheel: name tags, `WHEEL` metadata, member list, and the ELF
//! members (streamed one at a time from the zip, never unpacked to disk).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use wheel_format::{dist_info_path, DistInfoError, Record, WheelFile};
use wheel_read::{Content, How, ImageOptions, OpenError, WheelReader, WHOLE_MAX};

use crate::elf::{read_elf, ElfFacts, MAGIC};

/// Where the installer puts a member; see [`Member::installed`].
pub const SITE_PACKAGES: &str = "/prefix/lib/python/site-packages";
const PREFIX: &str = "/prefix";

/// One file of the wheel.
#[derive(Debug, Clone)]
pub struct Member {
    /// Path inside the zip.
    pub name: String,
    /// Absolute path after installation in a model layout: site-packages is
    /// [`SITE_PACKAGES`], `*.data/data` goes to `/prefix`, `scripts` to
    /// `/prefix/bin`, `headers` to `/prefix/include`. `$ORIGIN` rpaths are
    /// resolved in this layout.
    pub installed: String,
    /// Stored under `*.data/purelib/`.
    pub in_data_purelib: bool,
}

/// Parsed wheel, with the facts of every ELF member.
#[derive(Debug)]
pub struct Wheel {
    pub file_name: String,
    /// Platform tags from the file name, if it parses as a wheel name.
    pub name_platform_tags: Option<Vec<String>>,
    /// Platform parts of the `Tag:` lines of `*.dist-info/WHEEL`.
    pub metadata_platform_tags: Vec<String>,
    pub root_is_purelib: Option<bool>,
    pub members: Vec<Member>,
    pub elfs: Vec<(Member, ElfFacts)>,
}

impl Wheel {
    /// Platform tags the wheel claims: the file name's, else `WHEEL`'s.
    pub fn claimed_platform_tags(&self) -> Vec<String> {
        match &self.name_platform_tags {
            Some(tags) => tags.clone(),
            None => self.metadata_platform_tags.clone(),
        }
    }

    /// Installed paths of all members, for existence checks.
    pub fn installed_paths(&self) -> BTreeSet<&str> {
        self.members.iter().map(|m| m.installed.as_str()).collect()
    }
}

/// `{name}-{ver}(-{build})?-{py}-{abi}-{plat}.whl` -> platform tags.
pub fn platform_tags_from_name(file_name: &str) -> Option<Vec<String>> {
    Some(
        wheel_format::WheelName::parse(file_name)
            .ok()?
            .platform_tags(),
    )
}

/// Map a zip member path to its installed location (see [`Member`]).
fn installed_path(name: &str, dist_data: &str) -> (String, bool) {
    if let Some(rest) = name.strip_prefix(dist_data) {
        let (scheme, path) = rest.split_once('/').unwrap_or((rest, ""));
        return match scheme {
            "purelib" => (format!("{SITE_PACKAGES}/{path}"), true),
            "platlib" => (format!("{SITE_PACKAGES}/{path}"), false),
            "scripts" => (format!("{PREFIX}/bin/{path}"), false),
            "headers" => (format!("{PREFIX}/include/{path}"), false),
            _ => (format!("{PREFIX}/{path}"), false),
        };
    }
    (format!("{SITE_PACKAGES}/{name}"), false)
}

/// Open and read a wheel. Errors describe unreadable input (not a zip, not
/// a wheel, a corrupt or truncated member).
pub fn read_wheel(path: &Path) -> Result<Wheel> {
    read_wheel_with_threshold(path, WHOLE_MAX)
}

/// [`read_wheel`], reading ELF members larger than `sparse_threshold` bytes
/// with [`wheel_read`]'s bounded memory instead of whole.
pub fn read_wheel_with_threshold(path: &Path, sparse_threshold: u64) -> Result<Wheel> {
    read_open_wheel(&mut open_wheel(path)?, sparse_threshold)
}

/// Opens a wheel in `check`'s words for what is not one.
pub fn open_wheel(path: &Path) -> Result<WheelReader> {
    let not_zip = |e: &dyn std::fmt::Display| {
        anyhow!(
            "{} is not a zip archive ({e}); a wheel is a zip file — check the path, or rebuild the wheel",
            path.display()
        )
    };
    // An unreadable central directory means "not a zip" (the documented
    // message); bad member names in a readable one mean "not a valid wheel".
    WheelReader::open(path).map_err(|e| match e {
        OpenError::Open(e) => {
            anyhow::Error::new(e).context(format!("cannot open {}", path.display()))
        }
        OpenError::NotZip(e) => not_zip(&format!("{e:#}")),
        OpenError::BadNames(e) => e.context(format!("{} is not a valid wheel", path.display())),
        OpenError::NotWheel(e) => not_a_wheel(path, e),
    })
}

/// Reads the open wheel `zip`: its metadata, and the facts of every ELF
/// member (see [`read_wheel_with_threshold`]).
pub fn read_open_wheel(zip: &mut WheelReader, sparse_threshold: u64) -> Result<Wheel> {
    let file_name = zip.file_name().to_string();
    let path = zip.path().to_path_buf();
    let dist = zip.dist().to_string();
    let dist_data = format!("{dist}.data/");

    let text = zip.read_text(&dist_info_path(&dist, "WHEEL"))?;
    let metadata = zip.read_text(&dist_info_path(&dist, "METADATA"))?;
    wheel_format::wheel_identity(&file_name, &dist, &metadata)
        .with_context(|| format!("{} is not a valid wheel", path.display()))?;
    let wheel_meta = WheelFile::parse(&text);

    // Every member is verified against RECORD while it is read for the
    // checks (as `rocm-wheel inspect` reads it), so a modified member is
    // an unreadable wheel rather than a clean report.
    let record_name = dist_info_path(&dist, "RECORD");
    let record_text = zip.read_text(&record_name)?;
    let record = Record::parse(&record_name, &record_text)?;

    let mut members = Vec::new();
    let mut elfs = Vec::new();
    zip.walk(record, |m| {
        let (installed, in_data_purelib) = installed_path(m.name, &dist_data);
        let member = Member {
            name: m.name.to_string(),
            installed,
            in_data_purelib,
        };
        if let Some(facts) = read_member(m, sparse_threshold)? {
            elfs.push((member.clone(), facts));
        }
        members.push(member);
        Ok(())
    })?;

    Ok(Wheel {
        name_platform_tags: platform_tags_from_name(&file_name),
        file_name,
        metadata_platform_tags: wheel_meta.platform_tags(),
        root_is_purelib: wheel_meta.root_is_purelib,
        members,
        elfs,
    })
}

/// `check`'s words (naming the file) for a zip without one `.dist-info`.
fn not_a_wheel(path: &Path, e: DistInfoError) -> anyhow::Error {
    match e {
        DistInfoError::Missing => anyhow!(
            "{} is a zip archive but not a wheel: it has no top-level *.dist-info/WHEEL file",
            path.display()
        ),
        DistInfoError::Several(stems) => anyhow!(
            "{} has {} *.dist-info/WHEEL files ({}); a wheel has exactly one",
            path.display(),
            stems.len(),
            stems
                .iter()
                .map(|s| dist_info_path(s, "WHEEL"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Reads one member to its end, verifying it against RECORD; returns the
/// facts of an ELF member.
fn read_member(m: &mut wheel_read::Member<'_>, sparse_threshold: u64) -> Result<Option<ElfFacts>> {
    let name = m.name.to_string();
    let how = |head: &[u8]| {
        if head == MAGIC.as_slice() {
            How::Elf(ImageOptions {
                whole_max: sparse_threshold,
                ..ImageOptions::default()
            })
        } else {
            How::Hash
        }
    };
    let corrupt =
        || format!("reading wheel member {name}: the zip entry is corrupt (rebuild the wheel)");
    let Content::Elf(bytes) = m.read(MAGIC.len(), how, &corrupt)? else {
        return Ok(None);
    };
    let facts = read_elf(&bytes).with_context(|| {
        format!(
            "wheel member {name} starts like an ELF file but cannot be read — it is truncated or corrupt; rebuild the wheel"
        )
    })?;
    Ok(Some(facts))
}

/// Lexically normalise an absolute path (`.`/`..`/empty components).
/// Returns `None` if `..` climbs above `/`.
pub fn normalize(path: &str) -> Option<String> {
    wheel_format::normalize_components(path).map(|p| format!("/{p}"))
}

/// Parent directory of an absolute path.
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Show an installed path relative to site-packages (`pkg/lib`,
/// `../../../lib`), which is how rpath targets read in messages.
pub fn display_installed(path: &str) -> String {
    if let Some(rest) = path.strip_prefix(SITE_PACKAGES) {
        let rest = rest.trim_start_matches('/');
        return if rest.is_empty() {
            ".".into()
        } else {
            rest.into()
        };
    }
    let sp: Vec<&str> = SITE_PACKAGES.split('/').filter(|c| !c.is_empty()).collect();
    let p: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let common = sp.iter().zip(&p).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; sp.len() - common];
    parts.extend(&p[common..]);
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert_eq!(
            platform_tags_from_name(
                "a-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
            )
            .unwrap(),
            vec!["manylinux_2_17_x86_64", "manylinux2014_x86_64"]
        );
        assert_eq!(
            platform_tags_from_name("a-1.0-1-py3-none-any.whl").unwrap(),
            vec!["any"]
        );
        assert!(platform_tags_from_name("notawheel.zip").is_none());
        assert_eq!(normalize("/a/b/../c/./d").unwrap(), "/a/c/d");
        assert!(normalize("/a/../..").is_none());
        assert_eq!(parent("/a/b/c.so"), "/a/b");
        assert_eq!(
            installed_path("p-1.data/data/lib/libx.so", "p-1.data/"),
            ("/prefix/lib/libx.so".to_string(), false)
        );
        assert_eq!(
            installed_path("p-1.data/purelib/m/x.so", "p-1.data/"),
            (format!("{SITE_PACKAGES}/m/x.so"), true)
        );
        assert_eq!(
            display_installed(&format!("{SITE_PACKAGES}/pkg/lib")),
            "pkg/lib"
        );
        assert_eq!(display_installed("/prefix/lib"), "../..");
        assert_eq!(display_installed("/prefix/bin"), "../../../bin");
    }
}
