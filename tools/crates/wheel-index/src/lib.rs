//! wheel-index: a static package index of folders of wheels (and sdists:
//! TheRock's `rocm` selector is one), for
//! any static file server or `pip install --index-url file://...`: the
//! PEP 503 simple HTML pages and, next to each, the PEP 691 JSON form
//! (`index.json`), with sha256 fragments, `data-requires-python` and each
//! wheel's METADATA served apart (PEP 658 / PEP 714), so pip resolves a
//! split set without downloading every wheel.
//!
//! Layout: `OUT/index.html` lists the projects; `OUT/<project>/` (the
//! PEP 503 normalised name) holds its page and its wheels. Variant wheels
//! (PEP 825 draft) are listed as files, and each version's variant
//! metadata merged into `{name}-{version}-variants.json` beside them.
//! `rocm-wheel index` is [`write_index`].

mod render;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use wheel_format::{
    canonical_name, dist_info_path, normalize_version, wheel_identity, Digest, HashingReader,
    HashingWriter, Headers, VariantInfo, WheelName, VARIANT_JSON,
};
use wheel_read::WheelReader;

/// One wheel of the index, as its page lists it.
pub(crate) struct File {
    pub file_name: String,
    pub version: String,
    pub requires_python: Option<String>,
    pub sha256: String,
    pub size: u64,
    /// The sha256 of the METADATA served beside it; `None` for a file that
    /// is no wheel (a `-variants.json`).
    pub metadata_sha256: Option<String>,
}

/// What an index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub projects: usize,
}

/// Writes the index of `inputs` (folders of wheels and sdists, every file
/// in one either, or such files; sdists named as PEP 625 says; a file
/// given twice, same name and bytes, is indexed once) to `output`, which
/// must not exist or be empty: written whole or not at all (built next to
/// it, then renamed into place), the directories made for it removed again
/// on a refusal.
pub fn write_index(inputs: &[PathBuf], output: &Path) -> Result<Summary> {
    check_output(output)?;
    let wheels = list_inputs(inputs)?;
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let created: Vec<PathBuf> = (parent.ancestors())
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let result = build_in(&parent, &wheels, output);
    if result.is_err() {
        // Nothing is left behind, not even the directories made for it.
        for d in &created {
            let _ = std::fs::remove_dir(d);
        }
    }
    result
}

/// Builds the index in a temporary directory in `parent` and renames it
/// to `output`.
fn build_in(parent: &Path, wheels: &[PathBuf], output: &Path) -> Result<Summary> {
    let tmp = tempfile::Builder::new()
        .prefix(".rocm-wheel-index.")
        .tempdir_in(parent)
        .with_context(|| {
            format!(
                "cannot create a temporary directory in {}",
                parent.display()
            )
        })?;
    let projects = add_wheels(tmp.path(), wheels)?;
    render::write_pages(tmp.path(), &projects)?;
    let files: usize = projects.values().map(Vec::len).sum();
    publish(tmp, output)?;
    Ok(Summary {
        files,
        projects: projects.len(),
    })
}

/// Refuses an output that holds anything: an index is written whole, and
/// nothing of someone else's is ever replaced.
fn check_output(output: &Path) -> Result<()> {
    match std::fs::read_dir(output) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} exists and is not empty: remove it or name a new directory",
                    output.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("{} is not a directory", output.display())),
    }
}

/// The wheel files of `inputs`, in the order given (a folder's sorted by
/// name). Anything else in a folder is refused: an index of "what was in
/// dist/" must not silently leave a file out.
fn list_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut wheels = Vec::new();
    for input in inputs {
        let meta =
            std::fs::metadata(input).with_context(|| format!("cannot read {}", input.display()))?;
        if !meta.is_dir() {
            wheels.push(input.clone());
            continue;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(input)
            .with_context(|| format!("cannot list {}", input.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("cannot list {}", input.display()))?;
        entries.sort();
        for path in entries {
            if !path.is_file() {
                bail!(
                    "{} is not a wheel file: an index folder holds wheels and sdists only; move it out of {}",
                    path.display(),
                    input.display()
                );
            }
            wheels.push(path);
        }
    }
    Ok(wheels)
}

/// Where a wheel came from and what it is, to tell a clash from the same
/// wheel given twice.
struct Seen {
    path: PathBuf,
    sha256: String,
}

/// Copies every wheel into `dir/<project>/` with its METADATA beside it,
/// and each version's variant metadata; project (normalised name) -> its
/// files, sorted by file name.
fn add_wheels(dir: &Path, wheels: &[PathBuf]) -> Result<BTreeMap<String, Vec<File>>> {
    let mut projects: BTreeMap<String, Vec<File>> = BTreeMap::new();
    let mut by_name: BTreeMap<String, Seen> = BTreeMap::new();
    // (project, version, tags and label): what pip takes to be one wheel.
    let mut by_identity: BTreeMap<(String, String, String), PathBuf> = BTreeMap::new();
    let mut variants = Variants::new();
    for path in wheels {
        if is_sdist(path) {
            let (project, file) = add_sdist(dir, path, &mut by_name, &mut by_identity)?;
            if let Some(file) = file {
                projects.entry(project).or_default().push(file);
            }
            continue;
        }
        let (mut wheel, project, metadata) = open_wheel(path)?;
        let file_name = wheel.file_name().to_string();
        if given_before(&by_name, &file_name, path, "wheels")? {
            continue;
        }
        let parsed = WheelName::parse(&file_name)?;
        let version = Headers::parse("METADATA", &metadata)
            .require("Version")?
            .to_string();
        let mut tags = format!("{}-{}-{}", parsed.python, parsed.abi, parsed.platform);
        if let Some(label) = parsed.variant {
            let info = read_variant(&mut wheel, label, path)?;
            let stem = format!("{}-{}", parsed.name, parsed.version);
            merge_variant(&mut variants, (project.clone(), stem), info, path)?;
            tags = format!("{tags}-{label}");
        }
        let identity = (project.clone(), normalize_version(&version)?, tags);
        if let Some(other) = by_identity.insert(identity, path.clone()) {
            bail!(
                "{} and {} are the same wheel to pip (one project, version, tags and variant \
                 label) under two file names: keep one",
                other.display(),
                path.display()
            );
        }
        let file = copy_wheel(dir, wheel, &project, version, &metadata)?;
        let sha256 = file.sha256.clone();
        by_name.insert(
            file_name,
            Seen {
                path: path.clone(),
                sha256,
            },
        );
        projects.entry(project).or_default().push(file);
    }
    write_variants_files(dir, variants, &mut projects)?;
    for files in projects.values_mut() {
        files.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    }
    Ok(projects)
}

/// Whether the file at `path` named `file_name` was given before (the
/// same bytes: indexed once); two different files of one name are
/// refused, naming both (`what`: wheels, sdists).
fn given_before(
    by_name: &BTreeMap<String, Seen>,
    file_name: &str,
    path: &Path,
    what: &str,
) -> Result<bool> {
    let Some(seen) = by_name.get(file_name) else {
        return Ok(false);
    };
    let sha256 = hash_file(path)?;
    if seen.sha256 == sha256 {
        return Ok(true);
    }
    bail!(
        "two different {what} named {file_name}: {} (sha256 {}) and {} (sha256 {sha256}); \
         an index serves one file per name: keep one",
        seen.path.display(),
        seen.sha256,
        path.display()
    );
}

fn is_sdist(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".tar.gz"))
}

/// The project (PEP 503 name) and version of the sdist file `file_name`,
/// named as PEP 625 says: `<name>-<version>.tar.gz`, the name with `_`
/// for separators (so one `-` divides it from the version).
fn sdist_identity(file_name: &str) -> Result<(String, String)> {
    let pep625 = || {
        format!(
            "{file_name} is not an sdist name pip can read: PEP 625 names them \
             <name>-<version>.tar.gz, the name's separators written `_` (e.g. rocm-7.13.0a20261201.tar.gz)"
        )
    };
    let stem = file_name.strip_suffix(".tar.gz").unwrap_or(file_name);
    let (name, version) = stem.split_once('-').with_context(pep625)?;
    if version.contains('-') {
        bail!(pep625());
    }
    wheel_format::validate_name(name).with_context(pep625)?;
    let version = normalize_version(version).with_context(pep625)?;
    Ok((canonical_name(name), version))
}

/// Copies the sdist at `path` into `dir/<project>/`: its file name says
/// what it is (pip reads no more of it until it builds it); it must be a
/// gzip file. The file is `None` when the same sdist was given before.
fn add_sdist(
    dir: &Path,
    path: &Path,
    by_name: &mut BTreeMap<String, Seen>,
    by_identity: &mut BTreeMap<(String, String, String), PathBuf>,
) -> Result<(String, Option<File>)> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (project, version) = sdist_identity(&file_name)?;
    let mut src =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut magic = [0u8; 2];
    if src.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        bail!(
            "{} is not a gzip file: an sdist is a .tar.gz",
            path.display()
        );
    }
    if given_before(by_name, &file_name, path, "sdists")? {
        return Ok((project, None));
    }
    let identity = (project.clone(), version.clone(), "sdist".to_string());
    if let Some(other) = by_identity.insert(identity, path.to_path_buf()) {
        bail!(
            "{} and {} are the same sdist to pip (one project and version) under two file \
             names: keep one",
            other.display(),
            path.display()
        );
    }
    let project_dir = dir.join(&project);
    std::fs::create_dir_all(&project_dir)
        .with_context(|| format!("cannot create {}", project_dir.display()))?;
    let src =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let copied = copy_hashed(src, &project_dir.join(&file_name))?;
    let sha256 = copied.sha256_hex();
    by_name.insert(
        file_name.clone(),
        Seen {
            path: path.to_path_buf(),
            sha256: sha256.clone(),
        },
    );
    Ok((
        project,
        Some(File {
            file_name,
            version,
            requires_python: None,
            sha256,
            size: copied.len(),
            metadata_sha256: None,
        }),
    ))
}

/// Copies `wheel` into `dir/<project>/` with its `metadata` beside it.
fn copy_wheel(
    dir: &Path,
    wheel: WheelReader,
    project: &str,
    version: String,
    metadata: &str,
) -> Result<File> {
    let file_name = wheel.file_name().to_string();
    let project_dir = dir.join(project);
    std::fs::create_dir_all(&project_dir)
        .with_context(|| format!("cannot create {}", project_dir.display()))?;
    let copied = copy_hashed(wheel.into_file()?, &project_dir.join(&file_name))?;
    let metadata_path = project_dir.join(format!("{file_name}.metadata"));
    std::fs::write(&metadata_path, metadata.as_bytes())
        .with_context(|| format!("cannot write {}", metadata_path.display()))?;
    let requires_python = Headers::parse("METADATA", metadata)
        .get("Requires-Python")
        .map(str::to_string);
    Ok(File {
        file_name,
        version,
        requires_python,
        sha256: copied.sha256_hex(),
        size: copied.len(),
        metadata_sha256: Some(Digest::of(metadata.as_bytes()).sha256_hex()),
    })
}

/// (project, `{name}-{version}` as spelled in file names) -> the variant
/// metadata of its variant wheels, merged.
type Variants = BTreeMap<(String, String), VariantInfo>;

/// Merges the variant wheel at `path`'s metadata into its version's.
fn merge_variant(
    variants: &mut Variants,
    key: (String, String),
    info: VariantInfo,
    path: &Path,
) -> Result<()> {
    match variants.get_mut(&key) {
        Some(merged) => merged.merge(&info).with_context(|| {
            format!(
                "{} disagrees with the variant wheels of {} before it",
                path.display(),
                key.1
            )
        }),
        None => {
            variants.insert(key, info);
            Ok(())
        }
    }
}

/// Writes each version's `{name}-{version}-variants.json` beside its
/// wheels, listed on the project's page as a file.
fn write_variants_files(
    dir: &Path,
    variants: Variants,
    projects: &mut BTreeMap<String, Vec<File>>,
) -> Result<()> {
    for ((project, stem), info) in variants {
        let file_name = format!("{stem}-variants.json");
        let text = info.render();
        let path = dir.join(&project).join(&file_name);
        std::fs::write(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        let files = projects
            .get_mut(&project)
            .expect("a variant wheel's project");
        let version = (files.iter())
            .find(|f| f.file_name.starts_with(&format!("{stem}-")))
            .map(|f| f.version.clone())
            .unwrap_or_default();
        files.push(File {
            file_name,
            version,
            requires_python: None,
            sha256: Digest::of(text.as_bytes()).sha256_hex(),
            size: text.len() as u64,
            metadata_sha256: None,
        });
    }
    Ok(())
}

/// The open wheel at `path`, its project (normalised name) and METADATA;
/// refused, naming the file, unless pip would install it.
fn open_wheel(path: &Path) -> Result<(WheelReader, String, String)> {
    let shown = path.display();
    let is_whl = path.extension().is_some_and(|e| e == "whl");
    if !is_whl {
        bail!("{shown} is not a wheel (*.whl) or sdist (*.tar.gz): an index folder holds those only; move it out");
    }
    let not_wheel = || format!("{shown} is not a valid wheel");
    let mut wheel = WheelReader::open(path)
        .map_err(anyhow::Error::new)
        .with_context(not_wheel)?;
    let metadata = wheel
        .read_text(&dist_info_path(wheel.dist(), "METADATA"))
        .with_context(not_wheel)?;
    let (name, _) =
        wheel_identity(wheel.file_name(), wheel.dist(), &metadata).with_context(not_wheel)?;
    Ok((wheel, canonical_name(&name), metadata))
}

/// The `variant.json` of the variant wheel `wheel` (label `label`, from
/// its file name): one variant, that label.
fn read_variant(wheel: &mut WheelReader, label: &str, path: &Path) -> Result<VariantInfo> {
    let shown = path.display();
    let member = dist_info_path(wheel.dist(), VARIANT_JSON);
    if !wheel.names().contains(&member) {
        bail!("{shown} is named as a variant wheel (label {label}) but has no {member}");
    }
    let text = wheel.read_text(&member)?;
    let info = VariantInfo::parse(&text, &format!("{shown}: {member}"))?;
    if info.variants.len() != 1 || !info.variants.contains_key(label) {
        bail!(
            "{shown}: {member} must describe its own variant, {label}, alone; it lists {}",
            info.variants.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(info)
}

fn hash_file(path: &Path) -> Result<String> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = HashingReader::new(f);
    std::io::copy(&mut reader, &mut std::io::sink())
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(reader
        .complete_digest()
        .expect("read to the end")
        .sha256_hex())
}

/// Copies `src` to `dst`, hashing what it writes.
fn copy_hashed(mut src: std::fs::File, dst: &Path) -> Result<Digest> {
    let out =
        std::fs::File::create(dst).with_context(|| format!("cannot write {}", dst.display()))?;
    let mut out = HashingWriter::new(out);
    std::io::copy(&mut src, &mut out).with_context(|| format!("cannot write {}", dst.display()))?;
    let digest = out.digest().clone();
    out.into_inner().sync_all()?;
    Ok(digest)
}

/// Moves the finished index into place (a temporary directory is 0700;
/// an index is read by a web server or another user).
fn publish(tmp: tempfile::TempDir, output: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))?;
    let built = tmp.keep();
    // rename(2) replaces an empty directory, and nothing else.
    std::fs::rename(&built, output).map_err(|e| {
        let _ = std::fs::remove_dir_all(&built);
        anyhow::Error::new(e).context(format!(
            "cannot move the index into {} (it must not exist or be empty)",
            output.display()
        ))
    })
}
