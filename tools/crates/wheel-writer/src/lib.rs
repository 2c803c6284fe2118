//! wheel-writer: builds a PEP 427 wheel from a JSON manifest, reproducibly
//! (fixed order, timestamps and permissions) and atomically; and rewrites
//! existing wheels ([`rewrite`]), both through the parallel deflate writer
//! ([`parallel_zip`]).

mod deflate_map;
pub mod manifest;
mod metadata;
// The oracle tests reach the private writer modules, so they are unit
// tests kept where the integration tests would be (autotests is off).
#[cfg(test)]
#[path = "../tests/oracles.rs"]
mod oracles;
mod parallel_zip;
mod pep508;
pub mod rewrite;
pub mod rocm_sdk;

use anyhow::{bail, Context, Result};
use manifest::Manifest;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};

pub const GENERATOR: &str = concat!("rocm-wheel ", env!("CARGO_PKG_VERSION"));

#[derive(Debug, Clone)]
pub struct Options {
    /// 0 stores, 1–9 deflate levels.
    pub compression_level: u32,
    /// Threads for compressing large entries.
    pub jobs: usize,
    /// Timestamp for every entry (SOURCE_DATE_EPOCH); `None` is 1980-01-01.
    pub source_date_epoch: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compression_level: 6,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            source_date_epoch: None,
        }
    }
}

impl Options {
    /// Reads SOURCE_DATE_EPOCH from the environment.
    pub fn source_date_epoch_from_env() -> Result<Option<u64>> {
        match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(s) if !s.trim().is_empty() => s.trim().parse().map(Some).with_context(|| {
                format!("SOURCE_DATE_EPOCH={s:?} is not a non-negative integer number of seconds")
            }),
            _ => Ok(None),
        }
    }
}

/// One file headed for the archive.
#[derive(Debug, Clone)]
struct Item {
    arc: String,
    src: PathBuf,
    mode: u32,
    size: u64,
}

/// Everything validated up front, before any output is created.
struct Plan {
    dist_info: String,
    payload: Vec<Item>,
    /// Files from the manifest that live in our own `.dist-info/`.
    dist_info_files: Vec<Item>,
    licenses: Vec<Item>,
    metadata: String,
    wheel: String,
    entry_points: Option<String>,
}

/// The wheel file name the manifest describes.
pub fn wheel_file_name(m: &Manifest) -> Result<String> {
    wheel_format::validate_name(&m.distribution)?;
    wheel_format::validate_version(&m.version)?;
    let (_, file_tag) = wheel_format::parse_tags(&m.tags)?;
    Ok(wheel_format::wheel_file_name(
        &m.distribution,
        &m.version,
        &file_tag,
    ))
}

/// Builds the wheel at `output`, whose file name must be the one the
/// manifest implies. Nothing is left at `output` on error.
pub fn build(m: &Manifest, output: &Path, opts: &Options) -> Result<()> {
    // A wheel from an earlier run must not survive a failed build and pass
    // for its result. Only `.whl` files: a mistyped --output is not deleted.
    if output.extension().is_some_and(|e| e == "whl") && output.is_file() {
        std::fs::remove_file(output)
            .with_context(|| format!("cannot remove the old {}", output.display()))?;
    }
    if opts.compression_level > 9 {
        bail!(
            "compression level {} is out of range: use 0 (store) to 9",
            opts.compression_level
        );
    }
    let plan = plan(m, output)?;
    let mut tmp = atomic_write::AtomicFile::create(output)?;
    let out = BufWriter::with_capacity(1 << 20, tmp.file().try_clone()?);
    let mut zip =
        parallel_zip::ParallelZipWriter::new(out, opts.source_date_epoch, opts.compression_level);
    zip.set_jobs(opts.jobs);
    let mut record = wheel_format::RecordWriter::new();
    let mut add_row = |path: &str, w: &parallel_zip::Written| {
        record.hashed(path, &wheel_format::record_hash(&w.sha256), w.size);
    };
    for it in &plan.payload {
        let w = add_file(&mut zip, it)?;
        add_row(&it.arc, &w);
    }
    // Generated and copied .dist-info entries, sorted by path, RECORD last.
    let mut di: Vec<(String, DistInfo)> = Vec::new();
    di.push((
        format!("{}/METADATA", plan.dist_info),
        DistInfo::Text(plan.metadata.clone()),
    ));
    di.push((
        format!("{}/WHEEL", plan.dist_info),
        DistInfo::Text(plan.wheel.clone()),
    ));
    if let Some(ep) = &plan.entry_points {
        di.push((
            format!("{}/entry_points.txt", plan.dist_info),
            DistInfo::Text(ep.clone()),
        ));
    }
    for it in plan.licenses.iter().chain(&plan.dist_info_files) {
        di.push((it.arc.clone(), DistInfo::File(it.clone())));
    }
    di.sort_by(|a, b| a.0.cmp(&b.0));
    for (arc, d) in &di {
        let w = match d {
            DistInfo::Text(t) => zip.add_bytes(arc, t.as_bytes(), 0o644)?,
            DistInfo::File(it) => add_file(&mut zip, it)?,
        };
        add_row(arc, &w);
    }
    let record_path = format!("{}/RECORD", plan.dist_info);
    record.unhashed(&record_path);
    zip.add_bytes(&record_path, record.finish().as_bytes(), 0o644)?;
    // No fsync: the rename gives atomicity, durability is not needed for a
    // build output and would only cost time.
    zip.finish()?.into_inner().map_err(|e| e.into_error())?;
    tmp.commit(0o644)
}

enum DistInfo {
    Text(String),
    File(Item),
}

fn add_file<W: std::io::Write + std::io::Seek>(
    zip: &mut parallel_zip::ParallelZipWriter<W>,
    it: &Item,
) -> Result<parallel_zip::Written> {
    let f = File::open(&it.src)
        .with_context(|| format!("cannot open {} (for {})", it.src.display(), it.arc))?;
    zip.add_reader(&it.arc, f, it.size, it.mode)
}

fn stat_source(src: &str, arc: &str) -> Result<(PathBuf, u64)> {
    let p = PathBuf::from(src);
    let md = std::fs::metadata(&p).with_context(|| {
        format!("source file {src:?} (for {arc:?}) does not exist or cannot be read; check the manifest's \"src\"")
    })?;
    if !md.is_file() {
        bail!("source {src:?} (for {arc:?}) is not a regular file");
    }
    Ok((p, md.len()))
}

/// What a source file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Content {
    /// ELF executable or shared object (ET_EXEC, ET_DYN: PIE programs,
    /// libraries, extension modules).
    ElfLoadable,
    /// Any other ELF file (relocatable objects, core files).
    ElfOther,
    /// A `#!` script.
    Script,
    Other,
}

impl Content {
    /// A member's mode follows from what it is, never from the source's
    /// permission bits: those depend on where the action ran (remote
    /// execution marks every input executable), and a wheel's bytes must not.
    fn mode(self) -> u32 {
        match self {
            Content::ElfLoadable | Content::Script => 0o755,
            Content::ElfOther | Content::Other => 0o644,
        }
    }

    fn is_elf(self) -> bool {
        matches!(self, Content::ElfLoadable | Content::ElfOther)
    }
}

/// Reads at most the 18 bytes of an ELF header's e_ident + e_type.
fn sniff(path: &Path) -> Result<Content> {
    let mut head = [0u8; 18];
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    if n >= 2 && head[..2] == *b"#!" {
        return Ok(Content::Script);
    }
    if n < 4 || head[..4] != *b"\x7fELF" {
        return Ok(Content::Other);
    }
    if n < 18 {
        return Ok(Content::ElfOther);
    }
    // e_type at offset 16, in the byte order EI_DATA (offset 5) names.
    let e_type = match head[5] {
        2 => u16::from_be_bytes([head[16], head[17]]),
        _ => u16::from_le_bytes([head[16], head[17]]),
    };
    Ok(match e_type {
        2 | 3 => Content::ElfLoadable,
        _ => Content::ElfOther,
    })
}

/// Checks an archive path with the validator `check` and `inspect` use.
pub fn validate_archive_path(p: &str) -> Result<()> {
    if p.ends_with('/') {
        bail!("invalid archive path {p:?}: it ends in '/'; name a file, like \"pkg/mod.py\"");
    }
    match wheel_format::member_name_problem(p) {
        Some(why) => bail!(
            "invalid archive path {p:?}: {why}; paths are relative to the wheel root like \"pkg/mod.py\""
        ),
        None => Ok(()),
    }
}

const DATA_SCHEMES: &[&str] = &["purelib", "platlib", "headers", "scripts", "data"];
const GENERATED: &[&str] = &[
    "METADATA",
    "WHEEL",
    "RECORD",
    "entry_points.txt",
    "INSTALLER",
    "REQUESTED",
    "RECORD.jws",
    "RECORD.p7s",
];

/// `x.so`, `x.so.1.2`, `x.pyd`, `x.dll`, `x.dylib`: platform code by name.
fn is_native_name(path: &str) -> bool {
    let mut name = path.rsplit('/').next().unwrap_or(path);
    // Strip a version suffix such as `.1.2` of `libfoo.so.1.2`.
    while let Some((stem, ext)) = name.rsplit_once('.') {
        if !ext.is_empty() && ext.bytes().all(|b| b.is_ascii_digit()) {
            name = stem;
        } else {
            break;
        }
    }
    [".so", ".pyd", ".dll", ".dylib"]
        .iter()
        .any(|e| name.ends_with(e))
}

fn plan(m: &Manifest, output: &Path) -> Result<Plan> {
    let file_name = wheel_file_name(m)?;
    let (tags, _) = wheel_format::parse_tags(&m.tags)?;
    let base = output.file_name().and_then(|s| s.to_str()).unwrap_or("");
    if base != file_name {
        bail!(
            "--output file name {base:?} does not match the manifest; it must be {file_name:?} \
             (normalised name, version and tags)"
        );
    }
    let stem = wheel_format::dist_info_stem(&m.distribution, &m.version);
    let dist_info = format!("{stem}.dist-info");
    let data_dir = format!("{stem}.data");

    let mut claims = Claims::default();
    for g in GENERATED {
        claims.claim(&format!("{dist_info}/{g}"), "(generated by rocm-wheel)")?;
    }
    let files = collect_files(m, &dist_info, &data_dir, &mut claims)?;
    let licenses = collect_licenses(m, &dist_info, &mut claims)?;

    // Paths that are both a file and a directory (`a` and `a/b.py`).
    let mut members = wheel_format::MemberSet::new();
    let generated = ["METADATA", "WHEEL", "RECORD"].map(|g| format!("{dist_info}/{g}"));
    for arc in files
        .payload
        .iter()
        .chain(&files.dist_info)
        .chain(&licenses)
        .map(|it| &it.arc)
        .chain(&generated)
    {
        members.add(arc)?;
    }

    let purelib = root_is_purelib(m, files.platform_code.as_deref(), &tags)?;
    let metadata = metadata::render_metadata(m)?;
    let wheel = metadata::render_wheel(purelib, &tags);
    let entry_points = metadata::render_entry_points(&m.entry_points)?;
    Ok(Plan {
        dist_info,
        payload: files.payload,
        dist_info_files: files.dist_info,
        licenses,
        metadata,
        wheel,
        entry_points,
    })
}

/// Archive paths taken so far, with where each came from.
#[derive(Default)]
struct Claims(BTreeMap<String, String>);

impl Claims {
    fn claim(&mut self, arc: &str, src: &str) -> Result<()> {
        if let Some(prev) = self.0.insert(arc.to_string(), src.to_string()) {
            bail!("archive path {arc:?} appears twice: from {prev:?} and from {src:?}; remove one of them");
        }
        Ok(())
    }
}

/// The manifest's `files`, checked and stat'ed.
struct Files {
    /// Sorted by archive path.
    payload: Vec<Item>,
    /// Files that live in our own `.dist-info/`.
    dist_info: Vec<Item>,
    /// The first file that is platform code (ELF or native name), if any.
    platform_code: Option<String>,
}

fn collect_files(
    m: &Manifest,
    dist_info: &str,
    data_dir: &str,
    claims: &mut Claims,
) -> Result<Files> {
    let mut payload = Vec::new();
    let mut dist_info_files = Vec::new();
    let mut platform_code: Option<String> = None;
    for f in &m.files {
        let in_dist_info = check_place(&f.path, dist_info, data_dir)?;
        claims.claim(&f.path, &f.src)?;
        let (src, size) = stat_source(&f.src, &f.path)?;
        let content = sniff(&src)?;
        if platform_code.is_none() && (is_native_name(&f.path) || content.is_elf()) {
            platform_code = Some(f.path.clone());
        }
        let item = Item {
            arc: f.path.clone(),
            src,
            mode: content.mode(),
            size,
        };
        if in_dist_info {
            dist_info_files.push(item);
        } else {
            payload.push(item);
        }
    }
    payload.sort_by(|a, b| a.arc.cmp(&b.arc));
    Ok(Files {
        payload,
        dist_info: dist_info_files,
        platform_code,
    })
}

/// Checks that a file's archive path is valid and, if it is inside a
/// `.dist-info` or `.data` directory, inside this wheel's and in a place
/// allowed there; returns whether it is in our `.dist-info`.
fn check_place(path: &str, dist_info: &str, data_dir: &str) -> Result<bool> {
    validate_archive_path(path)?;
    let top = path.split('/').next().unwrap();
    let in_dist_info = top == dist_info;
    if top.ends_with(".dist-info") && !in_dist_info {
        bail!("archive path {path:?} is inside {top:?}, which is not this wheel's .dist-info ({dist_info:?}); \
               a wheel may only contain its own");
    }
    if top.ends_with(".data") {
        if top != data_dir {
            bail!("archive path {path:?} is inside {top:?}, which is not this wheel's .data directory ({data_dir:?})");
        }
        let scheme = path.split('/').nth(1).unwrap_or("");
        if !DATA_SCHEMES.contains(&scheme) || path.matches('/').count() < 2 {
            bail!(
                "archive path {path:?}: files in {data_dir}/ go under one of {}/",
                DATA_SCHEMES.join(", ")
            );
        }
    }
    if in_dist_info && path.starts_with(&format!("{dist_info}/licenses/")) {
        bail!(
            "archive path {path:?}: license files go in \"metadata.license_files\", not \"files\""
        );
    }
    Ok(in_dist_info)
}

/// The manifest's license files, placed under `.dist-info/licenses/`.
fn collect_licenses(m: &Manifest, dist_info: &str, claims: &mut Claims) -> Result<Vec<Item>> {
    let mut licenses = Vec::new();
    for lf in &m.metadata.license_files {
        validate_archive_path(&lf.path).context("in metadata.license_files")?;
        let arc = format!("{dist_info}/licenses/{}", lf.path);
        claims.claim(&arc, &lf.src)?;
        let (src, size) = stat_source(&lf.src, &arc)
            .with_context(|| format!("license file {:?} is missing", lf.src))?;
        licenses.push(Item {
            arc,
            src,
            mode: 0o644,
            size,
        });
    }
    Ok(licenses)
}

/// `Root-Is-Purelib`: as the manifest says (refused for a wheel with
/// platform code or a platform tag), else whether the wheel is pure.
fn root_is_purelib(
    m: &Manifest,
    platform_code: Option<&str>,
    tags: &[wheel_format::Tag],
) -> Result<bool> {
    let platform_tag = tags.iter().find(|t| t.platform != "any");
    Ok(match m.root_is_purelib {
        Some(true) => {
            if let Some(p) = platform_code {
                bail!("root_is_purelib is true but {p:?} is platform code (ELF, .so or .pyd); set it to null or false");
            }
            if let Some(t) = platform_tag {
                bail!("root_is_purelib is true but tag {t} is platform-specific; set it to null or false");
            }
            true
        }
        Some(false) => false,
        None => platform_code.is_none() && platform_tag.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Self {
            let f = Fixture {
                dir: tempfile::tempdir().unwrap(),
            };
            f.file("a/__init__.py", "x = 1\n");
            f.file("a/b.py", "y = 2\n");
            f.file("LICENSE", "license\n");
            f
        }
        fn p(&self, rel: &str) -> String {
            self.dir.path().join(rel).to_str().unwrap().to_string()
        }
        fn file(&self, rel: &str, text: &str) {
            let p = self.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        fn manifest(&self, edit: impl FnOnce(&mut serde_json::Value)) -> Manifest {
            let mut v = serde_json::json!({
                "distribution": "demo-pkg", "version": "1.0", "tags": ["py3-none-any"],
                "metadata": {"license_files": [{"path": "LICENSE", "src": self.p("LICENSE")}]},
                "files": [
                    {"path": "a/b.py", "src": self.p("a/b.py")},
                    {"path": "a/__init__.py", "src": self.p("a/__init__.py")}
                ]
            });
            edit(&mut v);
            Manifest::from_json(&v.to_string()).unwrap()
        }
        fn out(&self) -> PathBuf {
            let d = self.dir.path().join("out");
            std::fs::create_dir_all(&d).unwrap();
            d.join("demo_pkg-1.0-py3-none-any.whl")
        }
        /// Builds and expects an error containing `want`; no output left.
        fn fails(&self, m: &Manifest, want: &str) {
            let out = self.out();
            let e = format!("{:#}", build(m, &out, &Options::default()).unwrap_err());
            assert!(e.contains(want), "expected {want:?} in: {e}");
            assert_eq!(
                std::fs::read_dir(out.parent().unwrap()).unwrap().count(),
                0,
                "output left behind"
            );
        }
    }

    fn entries(whl: &Path) -> Vec<String> {
        let z = zip::ZipArchive::new(File::open(whl).unwrap()).unwrap();
        z.file_names().map(String::from).collect::<Vec<_>>()
    }

    fn read(whl: &Path, name: &str) -> String {
        let mut z = zip::ZipArchive::new(File::open(whl).unwrap()).unwrap();
        let mut s = String::new();
        z.by_name(name).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn order_and_record() {
        let f = Fixture::new();
        let out = f.out();
        build(&f.manifest(|_| {}), &out, &Options::default()).unwrap();
        let mut names = entries(&out);
        // zip's file_names() is unordered; order is checked via the raw bytes.
        names.sort();
        let raw = std::fs::read(&out).unwrap();
        let pos = |n: &str| {
            raw.windows(n.len())
                .position(|w| w == n.as_bytes())
                .unwrap()
        };
        let order = [
            "a/__init__.py",
            "a/b.py",
            "demo_pkg-1.0.dist-info/METADATA",
            "demo_pkg-1.0.dist-info/WHEEL",
            "demo_pkg-1.0.dist-info/licenses/LICENSE",
            "demo_pkg-1.0.dist-info/RECORD",
        ];
        assert_eq!(names.len(), order.len());
        for w in order.windows(2) {
            assert!(pos(w[0]) < pos(w[1]), "{} not before {}", w[0], w[1]);
        }
        let record = read(&out, "demo_pkg-1.0.dist-info/RECORD");
        // sha256("y = 2\n"), computed independently with sha256sum.
        assert!(
            record.contains("a/b.py,sha256=9GmEJ2PbOYEHB2T5aLvHecsHefMm44a5m740MfjzDEk,6\n"),
            "{record}"
        );
        assert!(
            record.ends_with("demo_pkg-1.0.dist-info/RECORD,,\n"),
            "{record}"
        );
        assert_eq!(record.lines().count(), 6);
        let wheel = read(&out, "demo_pkg-1.0.dist-info/WHEEL");
        assert!(wheel.contains("Root-Is-Purelib: true\n"), "{wheel}");
    }

    #[test]
    fn reproducible_across_source_locations() {
        let a = Fixture::new();
        let b = Fixture::new();
        let (oa, ob) = (a.out(), b.out());
        build(&a.manifest(|_| {}), &oa, &Options::default()).unwrap();
        build(
            &b.manifest(|_| {}),
            &ob,
            &Options {
                jobs: 1,
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(std::fs::read(&oa).unwrap(), std::fs::read(&ob).unwrap());
        let opts = Options {
            source_date_epoch: Some(1_700_000_000),
            ..Options::default()
        };
        build(&b.manifest(|_| {}), &ob, &opts).unwrap();
        assert_ne!(std::fs::read(&oa).unwrap(), std::fs::read(&ob).unwrap());
    }

    #[test]
    fn failed_build_removes_an_old_wheel() {
        let f = Fixture::new();
        let out = f.out();
        build(&f.manifest(|_| {}), &out, &Options::default()).unwrap();
        assert!(out.is_file());
        f.fails(
            &f.manifest(|v| v["files"][0]["src"] = f.p("gone.py").into()),
            "gone.py",
        );
    }

    #[test]
    fn output_name_must_match() {
        let f = Fixture::new();
        let bad = f.dir.path().join("demo-pkg-1.0-py3-none-any.whl");
        let e = build(&f.manifest(|_| {}), &bad, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("it must be \"demo_pkg-1.0-py3-none-any.whl\""),
            "{e}"
        );
        assert!(!bad.exists());
    }

    #[test]
    fn bad_inputs_leave_no_output() {
        let f = Fixture::new();
        let m = f.manifest(|v| v["files"][0]["src"] = f.p("missing.py").into());
        f.fails(&m, "missing.py");
        let m = f.manifest(|v| v["metadata"]["license_files"][0]["src"] = f.p("NOPE").into());
        f.fails(&m, "license file");
        let m = f.manifest(|v| v["files"][1]["path"] = "a/b.py".into());
        f.fails(&m, "appears twice");
        for (p, why) in [
            ("../x.py", "'..'"),
            ("/x.py", "absolute"),
            ("a//x.py", "empty component"),
            ("a/./x.py", "'.' component"),
            ("a\\x.py", "'\\'"),
            (
                "other-1.0.dist-info/METADATA",
                "not this wheel's .dist-info",
            ),
            ("demo_pkg-1.0.dist-info/WHEEL", "appears twice"),
            ("demo_pkg-1.0.dist-info/licenses/X", "license_files"),
            ("other-1.0.data/purelib/x.py", "not this wheel's .data"),
            ("demo_pkg-1.0.data/nonsense/x.py", "go under one of"),
        ] {
            let m = f.manifest(|v| v["files"][0]["path"] = p.into());
            f.fails(&m, why);
        }
        let m = f.manifest(|v| v["version"] = "1.0.0-rc1".into());
        f.fails(&m, "use \"1.0.0rc1\"");
        let m = f.manifest(|v| {
            v["metadata"]["requires_dist"] = serde_json::json!(["x; extra == 'gpu'"])
        });
        f.fails(&m, "not in metadata.provides_extra");
        let m = f.manifest(|v| v["metadata"]["requires_python"] = ">=3.10,".into());
        f.fails(&m, "requires_python");
        let m = f.manifest(|v| {
            v["metadata"]["license_expression"] = "MIT".into();
            v["metadata"]["classifiers"] =
                serde_json::json!(["License :: OSI Approved :: MIT License"]);
        });
        f.fails(&m, "PEP 639 replaces license classifiers");
        let m = f.manifest(|v| v["metadata"]["summary"] = "two\nlines".into());
        f.fails(&m, "single line");
        let m = f.manifest(|v| v["metadata"]["provides_extra"] = serde_json::json!(["Test_Extra"]));
        f.fails(&m, "use \"test-extra\"");
    }

    #[test]
    fn purelib_detection() {
        let f = Fixture::new();
        // A real ELF file without a .so name still counts as platform code.
        std::fs::copy("/bin/true", f.dir.path().join("tool")).unwrap();
        let with_elf = |v: &mut serde_json::Value| {
            v["files"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"path": "a/tool", "src": f.p("tool")}));
        };
        let out = f.out();
        build(&f.manifest(with_elf), &out, &Options::default()).unwrap();
        assert!(read(&out, "demo_pkg-1.0.dist-info/WHEEL").contains("Root-Is-Purelib: false\n"));
        let mode = zip::ZipArchive::new(File::open(&out).unwrap())
            .unwrap()
            .by_name("a/tool")
            .unwrap()
            .unix_mode();
        assert_eq!(mode, Some(0o100755));
        std::fs::remove_file(&out).unwrap();
        let m = f.manifest(|v| {
            with_elf(v);
            v["root_is_purelib"] = true.into();
        });
        f.fails(&m, "is platform code");
        let m = f.manifest(|v| {
            v["root_is_purelib"] = true.into();
            v["tags"] = serde_json::json!(["py3-none-linux_x86_64"]);
        });
        let out = f
            .dir
            .path()
            .join("out/demo_pkg-1.0-py3-none-linux_x86_64.whl");
        let e = build(&m, &out, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("platform-specific"), "{e}");
    }

    #[test]
    fn modes_follow_content_not_permission_bits() {
        use std::os::unix::fs::PermissionsExt;
        let f = Fixture::new();
        std::fs::copy("/bin/true", f.dir.path().join("tool")).unwrap();
        f.file("run.sh", "#!/bin/sh\nexit 0\n");
        f.file("data.txt", "not a script\n");
        // A 64-bit little-endian ELF header of type ET_REL (an object file).
        let mut rel = b"\x7fELF\x02\x01\x01".to_vec();
        rel.resize(64, 0);
        rel[16] = 1;
        std::fs::write(f.dir.path().join("x.o"), &rel).unwrap();
        let srcs = [
            "a/__init__.py",
            "a/b.py",
            "tool",
            "run.sh",
            "data.txt",
            "x.o",
            "LICENSE",
        ];
        let m = f.manifest(|v| {
            let files = v["files"].as_array_mut().unwrap();
            for (path, src) in [
                ("a/tool", "tool"),
                ("a/run.sh", "run.sh"),
                ("a/data.txt", "data.txt"),
                ("a/x.o", "x.o"),
            ] {
                files.push(serde_json::json!({"path": path, "src": f.p(src)}));
            }
        });
        let out = f.out();
        let mut wheels = Vec::new();
        // What remote execution does to inputs (all executable), and the
        // opposite: the wheel must not change.
        for bits in [0o755, 0o644] {
            for s in srcs {
                std::fs::set_permissions(
                    f.dir.path().join(s),
                    std::fs::Permissions::from_mode(bits),
                )
                .unwrap();
            }
            build(&m, &out, &Options::default()).unwrap();
            wheels.push(std::fs::read(&out).unwrap());
        }
        assert!(
            wheels[0] == wheels[1],
            "the wheel's bytes depend on the inputs' executable bits"
        );
        let mut z = zip::ZipArchive::new(File::open(&out).unwrap()).unwrap();
        for (name, mode) in [
            ("a/tool", 0o100755),
            ("a/run.sh", 0o100755),
            ("a/b.py", 0o100644),
            ("a/data.txt", 0o100644),
            ("a/x.o", 0o100644),
            ("demo_pkg-1.0.dist-info/licenses/LICENSE", 0o100644),
        ] {
            assert_eq!(z.by_name(name).unwrap().unix_mode(), Some(mode), "{name}");
        }
    }

    #[test]
    fn native_names() {
        for yes in [
            "a/b.so",
            "libx.so.1",
            "x.so.1.23",
            "m.cpython-312-x86_64-linux-gnu.so",
            "m.pyd",
            "a.dll",
            "a.dylib",
        ] {
            assert!(is_native_name(yes), "{yes}");
        }
        for no in ["a/b.py", "x.so.py", "so", "a/.so.d/x.txt", "x.sox", "v1.2"] {
            assert!(!is_native_name(no), "{no}");
        }
    }

    #[test]
    fn compression_levels() {
        let f = Fixture::new();
        let big = "some text that compresses well\n".repeat(10_000);
        f.file("a/big.txt", &big);
        let m = f.manifest(|v| {
            v["files"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"path": "a/big.txt", "src": f.p("a/big.txt")}))
        });
        let out = f.out();
        build(
            &m,
            &out,
            &Options {
                compression_level: 0,
                ..Options::default()
            },
        )
        .unwrap();
        let stored = std::fs::metadata(&out).unwrap().len();
        assert!(stored > big.len() as u64);
        build(
            &m,
            &out,
            &Options {
                compression_level: 9,
                ..Options::default()
            },
        )
        .unwrap();
        let deflated = std::fs::metadata(&out).unwrap().len();
        assert!(deflated < big.len() as u64 / 20, "{deflated}");
        assert_eq!(read(&out, "a/big.txt"), big);
        let e = build(
            &m,
            &out,
            &Options {
                compression_level: 10,
                ..Options::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("out of range"), "{e}");
    }
}
