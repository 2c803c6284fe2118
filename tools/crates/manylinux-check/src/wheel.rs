//! Reading a wheel: name tags, `WHEEL` metadata, member list, and the ELF
//! members (streamed one at a time from the zip, never unpacked to disk).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use wheel_format::{
    dist_info_path, find_dist_info, Digest, DistInfoError, HashingReader, Record, WheelFile,
};
use wheel_inspect::members::read_text;

use crate::elf::{read_elf, ElfFacts, MAGIC};
use wheel_inspect::elf_image::{elf_image, ImageOptions, WHOLE_MAX};

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
/// with [`elf_image`]'s bounded memory instead of whole.
pub fn read_wheel_with_threshold(path: &Path, sparse_threshold: u64) -> Result<Wheel> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut zip = open_zip(path)?;
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.name_for_index(i).unwrap_or_default().to_string())
        .collect();
    let dist =
        find_dist_info(names.iter().map(String::as_str)).map_err(|e| not_a_wheel(path, e))?;
    let dist_data = format!("{dist}.data/");

    let text = read_text(&mut zip, &dist_info_path(&dist, "WHEEL"))?;
    let metadata = read_text(&mut zip, &dist_info_path(&dist, "METADATA"))?;
    wheel_format::wheel_identity(&file_name, &dist, &metadata)
        .with_context(|| format!("{} is not a valid wheel", path.display()))?;
    let wheel_meta = WheelFile::parse(&text);

    // Every member is verified against RECORD while it is read for the
    // checks (shared with `rocm-wheel inspect`), so a modified member is
    // an unreadable wheel rather than a clean report.
    let record_name = dist_info_path(&dist, "RECORD");
    let record_text = read_text(&mut zip, &record_name)?;
    let mut record = Record::parse(&record_name, &record_text)?;

    let mut members = Vec::new();
    let mut elfs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if name.ends_with('/') {
            continue;
        }
        let expected = record.expect(name)?;
        let (installed, in_data_purelib) = installed_path(name, &dist_data);
        let member = Member {
            name: name.clone(),
            installed,
            in_data_purelib,
        };
        let read = MemberRead {
            index: i,
            name,
            expected: expected.as_ref(),
            sparse_threshold,
        };
        if let Some(facts) = read_member(&mut zip, &read)? {
            elfs.push((member.clone(), facts));
        }
        members.push(member);
    }

    record.finish()?;

    Ok(Wheel {
        name_platform_tags: platform_tags_from_name(&file_name),
        file_name,
        metadata_platform_tags: wheel_meta.platform_tags(),
        root_is_purelib: wheel_meta.root_is_purelib,
        members,
        elfs,
    })
}

type Zip = zip::ZipArchive<BufReader<File>>;

/// Opens the zip after checking its member names as pip does (duplicates,
/// symlinks): shared with `inspect`, so the two agree on what a valid wheel
/// is.
fn open_zip(path: &Path) -> Result<Zip> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let not_zip = |e: &dyn std::fmt::Display| {
        anyhow!(
            "{} is not a zip archive ({e}); a wheel is a zip file — check the path, or rebuild the wheel",
            path.display()
        )
    };
    // An unreadable central directory means "not a zip" (the documented
    // message); bad member names in a readable one mean "not a valid wheel".
    let members = wheel_inspect::members::central_directory(&mut file)
        .map_err(|e| not_zip(&format!("{e:#}")))?;
    wheel_inspect::members::validate(&members)
        .with_context(|| format!("{} is not a valid wheel", path.display()))?;
    file.rewind()
        .with_context(|| format!("cannot read {}", path.display()))?;
    zip::ZipArchive::new(BufReader::new(file)).map_err(|e| not_zip(&e))
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

/// Which member [`read_member`] reads and what RECORD expects of it.
struct MemberRead<'a> {
    index: usize,
    name: &'a str,
    expected: Option<&'a wheel_format::Expected>,
    sparse_threshold: u64,
}

/// Reads one member to its end, verifying it against RECORD; returns the
/// facts of an ELF member.
fn read_member(zip: &mut Zip, m: &MemberRead) -> Result<Option<ElfFacts>> {
    let (i, name) = (m.index, m.name);
    let entry = zip
        .by_index(i)
        .with_context(|| format!("reading wheel member {name}"))?;
    let size = entry.size();
    let mut entry = HashingReader::new(entry);
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = entry
            .read(&mut head[got..])
            .with_context(|| format!("reading wheel member {name}: the zip entry is corrupt"))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    let corrupt =
        || format!("reading wheel member {name}: the zip entry is corrupt (rebuild the wheel)");
    if got < 4 || head != MAGIC {
        if let Some(expected) = m.expected {
            std::io::copy(&mut entry, &mut std::io::sink()).with_context(corrupt)?;
            expected.verify(entry.complete_digest().expect("io::copy reads to the end"))?;
        }
        return Ok(None);
    }
    // The digest of the first complete read of the member.
    let mut digest: Option<Digest> = None;
    drop(entry);
    let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| -> Result<()> {
        let mut e = HashingReader::new(zip.by_index(i)?);
        f(&mut e)?;
        if digest.is_none() {
            digest = e.complete_digest().cloned();
        }
        Ok(())
    };
    let opts = ImageOptions {
        whole_max: m.sparse_threshold,
        ..ImageOptions::default()
    };
    let bytes = elf_image(&mut reopen, size, &opts).with_context(corrupt)?;
    if let Some(expected) = m.expected {
        // sparse_image reads every member to the end at least once.
        let digest = digest.ok_or_else(|| {
            anyhow!("internal error: wheel member {name} was never read to the end")
        })?;
        expected.verify(&digest)?;
    }
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
    let mut out: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            c => out.push(c),
        }
    }
    Some(format!("/{}", out.join("/")))
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
