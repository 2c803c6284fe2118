//! Describe a wheel (`.whl`), shared object (`.so`) or object file (`.o`):
//! wheel tags, name, version and files; per ELF file its `DT_NEEDED`,
//! `DT_RUNPATH`/`DT_RPATH`, `DT_SONAME` and the GPU targets of every offload
//! bundle in its `.hip_fatbin` section, or the kpack markers of its
//! `.rocm_kpack_ref` section. AMDGPU code objects report their own target,
//! files made of offload bundles (`.hipfb`) their bundles, and kpack
//! archives (`.kpack`) their targets and kernels.
//!
//! Wheels are verified while reading: a zip without a `*.dist-info/WHEEL`
//! is not a wheel, and every member must match its `RECORD` line (sha256 and
//! size); any mismatch is an error naming the member.
//!
//! # JSON schema (`rocm-wheel inspect --json`), version 1
//!
//! Fields are only ever added; a field's meaning never changes within a
//! schema version.
//!
//! Generic targets (code-object version 6, e.g. `gfx12-generic`) run on
//! several GPUs; which ones comes from the family table of the
//! offload-bundle crate (a generic target it lacks has no coverage).
//!
//! ```text
//! {
//!   "schema_version": 1,
//!   "path": "<input path as given>",
//!   "kind": "wheel" | "elf" | "bundle",
//!   "wheel": null | {                       // only for kind == "wheel"
//!     "filename": "<file name>",
//!     "name": "<METADATA Name>", "version": "<METADATA Version>",
//!     "wheel_version": "<WHEEL Wheel-Version>",
//!     "generator": "<WHEEL Generator>" | null,
//!     "root_is_purelib": bool,
//!     "build": "<WHEEL Build>" | null,
//!     "tags": ["py3-none-manylinux_2_28_x86_64", ...],   // WHEEL Tag lines
//!     "files": [{"path": "...", "size": <bytes>}]          // zip order
//!   },
//!   "elf_files": [                          // one per ELF member / the file
//!     {
//!       "path": "<member path in the wheel, or the input path>",
//!       "type": "shared object" | "relocatable" | "executable" | "other",
//!       "machine": "x86-64" | "aarch64" | "amdgpu" | "<e_machine number>",
//!       "soname": "<DT_SONAME>" | null,
//!       "needed": ["<DT_NEEDED>", ...],     // file order
//!       "runpath": ["<entry>", ...],        // DT_RUNPATH split at ':'
//!       "rpath": ["<entry>", ...],          // DT_RPATH split at ':'
//!       "bundles": [                        // .hip_fatbin, in section order
//!         {
//!           "offset": <offset in the section>,
//!           "size": <bytes in the section>,
//!           "compression": "none" | "zstd" | "zlib",
//!           "format_version": null | <CCOB version>,
//!           "entries": [{"id": "<bundle entry id>",
//!                        "target": "<target id, e.g. gfx90a:xnack+; empty for host>",
//!                        "covers": ["gfx1200", ...],  // only for a generic
//!                                 // target (gfx12-generic): the targets it runs on
//!                        "size": <bytes>}]
//!         }
//!       ],
//!       "targets": {"<target id>": <number of code objects>, ...}  // sorted;
//!                       // for an AMDGPU code object: its own target, 1
//!       "covers": {"<generic target id>": ["gfx1200", ...], ...}  // the
//!                       // generic targets of "targets" and what they run on
//!       "kpack_markers": [                  // .rocm_kpack_ref, in section order
//!         {"kernel_name": "<archive key without #index>",
//!          "search_paths": ["../.kpack/@GFXARCH@.kpack", ...]}
//!       ]
//!     }
//!   ],
//!   "bundle_files": [                       // members / the file made of bundles
//!     {"path": "...", "bundles": [as above], "targets": {as above},
//!      "covers": {as above}}
//!   ],
//!   "kpack_archives": [                     // .kpack members / the file
//!     {"path": "...", "group": "<group_name>", "targets": ["gfx1201", ...],
//!      "compression": "none" | "zstd-per-kernel",
//!      "kernels": [{"key": "<name>#<index>", "target": "gfx1201",
//!                   "size": <uncompressed bytes>}]}   // TOC order
//!   ]
//! }
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use gfx_targets::generic_covers;
use serde::Serialize;
use wheel_format::dist_info_path;
use wheel_read::{Content as Got, How, ImageOptions, Member, OpenError, WheelReader, KEEP_MAX};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub path: String,
    pub kind: &'static str,
    pub wheel: Option<WheelInfo>,
    pub elf_files: Vec<ElfInfo>,
    pub bundle_files: Vec<BundleFileInfo>,
    pub kpack_archives: Vec<KpackArchiveInfo>,
}

/// A kpack archive: its table of contents.
#[derive(Debug, Clone, Serialize)]
pub struct KpackArchiveInfo {
    pub path: String,
    pub group: String,
    pub targets: Vec<String>,
    pub compression: &'static str,
    pub kernels: Vec<KpackKernelInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KpackKernelInfo {
    pub key: String,
    pub target: String,
    pub size: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KpackMarkerInfo {
    pub kernel_name: String,
    pub search_paths: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WheelInfo {
    pub filename: String,
    pub name: String,
    pub version: String,
    pub wheel_version: String,
    pub generator: Option<String>,
    pub root_is_purelib: bool,
    pub build: Option<String>,
    pub tags: Vec<String>,
    /// Every ABI tag of the name is a free-threaded CPython's (`cp314t`).
    pub free_threaded: bool,
    /// A variant wheel's label (PEP 825 draft: `...-rocm.whl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant_label: Option<String>,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ElfInfo {
    pub path: String,
    #[serde(rename = "type")]
    pub elf_type: &'static str,
    pub machine: String,
    pub soname: Option<String>,
    pub needed: Vec<String>,
    pub runpath: Vec<String>,
    pub rpath: Vec<String>,
    pub bundles: Vec<BundleInfo>,
    pub targets: BTreeMap<String, u32>,
    /// The generic targets of `targets` and the targets they run on.
    pub covers: BTreeMap<String, Vec<String>>,
    pub kpack_markers: Vec<KpackMarkerInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BundleInfo {
    pub offset: u64,
    pub size: u64,
    pub compression: &'static str,
    pub format_version: Option<u16>,
    pub entries: Vec<EntryInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EntryInfo {
    pub id: String,
    pub target: String,
    /// For a generic target: the targets its code object runs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub covers: Option<Vec<String>>,
    pub size: u64,
}

/// A file (or wheel member) made only of offload bundles, e.g. a `.hipfb`
/// or the `.co` libraries some ROCm packages ship.
#[derive(Debug, Clone, Serialize)]
pub struct BundleFileInfo {
    pub path: String,
    pub bundles: Vec<BundleInfo>,
    pub targets: BTreeMap<String, u32>,
    /// The generic targets of `targets` and the targets they run on.
    pub covers: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Content {
    Elf,
    Bundle,
    Kpack,
    Other,
}

/// Bytes needed by [`classify`] to decide.
const CLASSIFY_LEN: usize = 24;

/// What a file is, from its first bytes (all of them if it is shorter than
/// [`CLASSIFY_LEN`]).
fn classify(head: &[u8]) -> Content {
    if head.starts_with(elf_read::raw::ELFMAG) {
        return Content::Elf;
    }
    if head.starts_with(offload_bundle::MAGIC) {
        return Content::Bundle;
    }
    // `KPAK` then format version 1.
    if head.len() >= 8
        && head.starts_with(kpack::archive::MAGIC)
        && head[4..8] == 1u32.to_le_bytes()
    {
        return Content::Kpack;
    }
    // `CCOB` alone is a weak signature: also require a known version and
    // method so data files that happen to start with it are left alone.
    if head.len() >= 8 && head.starts_with(offload_bundle::CCOB_MAGIC) {
        let version = u16::from_le_bytes([head[4], head[5]]);
        let method = u16::from_le_bytes([head[6], head[7]]);
        if (1..=3).contains(&version) && method <= 1 {
            return Content::Bundle;
        }
    }
    Content::Other
}

/// Summarises bundles one at a time (only one decompressed bundle is held
/// in memory).
fn summarize_bundles(data: &[u8]) -> Result<(Vec<BundleInfo>, BTreeMap<String, u32>)> {
    let mut targets = BTreeMap::new();
    let mut infos = Vec::new();
    for b in
        offload_bundle::BundleIter::new(data, &offload_bundle::Limits::default()).headers_only()
    {
        let b = b?;
        let mut entries = Vec::with_capacity(b.entries.len());
        for e in &b.entries {
            let id = e.parsed_id();
            if !id.is_host() {
                *targets.entry(id.target_id.to_string()).or_insert(0) += 1;
            }
            entries.push(EntryInfo {
                id: e.id.clone(),
                target: id.target_id.to_string(),
                covers: generic_covers(id.target_id).map(<[String]>::to_vec),
                size: e.size,
            });
        }
        infos.push(BundleInfo {
            offset: b.start,
            size: b.len,
            compression: b.compressed.as_ref().map_or("none", |c| c.method.name()),
            format_version: b.compressed.as_ref().map(|c| c.version),
            entries,
        });
    }
    Ok((infos, targets))
}

/// Describes a file that holds only offload bundles.
pub fn inspect_bundle_file(name: &str, data: &[u8]) -> Result<BundleFileInfo> {
    let (bundles, targets) = summarize_bundles(data)?;
    if bundles.is_empty() {
        bail!("no offload bundle in the file");
    }
    Ok(BundleFileInfo {
        path: name.to_string(),
        bundles,
        covers: covers_of(&targets),
        targets,
    })
}

/// Describes a kpack archive held in memory: its table of contents.
pub fn inspect_kpack(name: &str, data: &[u8]) -> Result<KpackArchiveInfo> {
    let toc = kpack::toc_of(data, name)?;
    let kernels = toc
        .binaries
        .iter()
        .flat_map(|(key, arches)| {
            arches.iter().map(move |(arch, r)| KpackKernelInfo {
                key: key.clone(),
                target: arch.clone(),
                size: r.original_size,
            })
        })
        .collect();
    Ok(KpackArchiveInfo {
        path: name.to_string(),
        group: toc.group_name,
        targets: toc.gfx_arches,
        compression: toc.compression.scheme(),
        kernels,
    })
}

/// Inspects a wheel, shared object, object file, code object or bundle file.
pub fn inspect(path: &Path) -> Result<Report> {
    let shown = path.display().to_string();
    let mut f = std::fs::File::open(path).with_context(|| format!("cannot open {shown}"))?;
    let mut head = Vec::with_capacity(CLASSIFY_LEN);
    (&mut f)
        .take(CLASSIFY_LEN as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {shown}"))?;
    let report = |kind, wheel, c: Contents| Report {
        schema_version: SCHEMA_VERSION,
        path: shown.clone(),
        kind,
        wheel,
        elf_files: c.elf_files,
        bundle_files: c.bundle_files,
        kpack_archives: c.kpack_archives,
    };
    if head.starts_with(b"PK\x03\x04") {
        let (wheel, contents) = inspect_wheel(f, path).with_context(|| shown.clone())?;
        return Ok(report("wheel", Some(wheel), contents));
    }
    match classify(&head) {
        Content::Elf => {
            let data = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
            let info = inspect_elf(&shown, &data).with_context(|| shown.clone())?;
            Ok(report("elf", None, Contents { elf_files: vec![info], ..Default::default() }))
        }
        Content::Bundle => {
            let data = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
            let info = inspect_bundle_file(&shown, &data).with_context(|| shown.clone())?;
            Ok(report("bundle", None, Contents { bundle_files: vec![info], ..Default::default() }))
        }
        Content::Kpack => {
            let data = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
            let info = inspect_kpack(&shown, &data)?;
            Ok(report("kpack", None, Contents { kpack_archives: vec![info], ..Default::default() }))
        }
        Content::Other => bail!(
            "{shown}: not a wheel, ELF file (.so/.o/code object), offload bundle or kpack archive; nothing to inspect"
        ),
    }
}

/// Describes one ELF file held in memory; `name` is used in messages.
pub fn inspect_elf(name: &str, data: &[u8]) -> Result<ElfInfo> {
    use elf_read::raw::{EM_AARCH64, EM_AMDGPU, EM_X86_64};
    let elf = elf_read::Parsed::parse(data).context("not a valid ELF file")?;
    let elf_type = elf.kind().as_str();
    let e_machine = elf.header().e_machine;
    let machine = match e_machine {
        EM_X86_64 => "x86-64".to_string(),
        EM_AARCH64 => "aarch64".to_string(),
        EM_AMDGPU => "amdgpu".to_string(),
        m => m.to_string(),
    };
    let (bundles, mut targets) = match offload_bundle::hip_fatbin_section(data)? {
        None => (Vec::new(), BTreeMap::new()),
        Some(sec) => summarize_bundles(sec).context(".hip_fatbin section")?,
    };
    if e_machine == EM_AMDGPU {
        // A code object: its own target.
        let hdr = offload_bundle::read_code_object_header(data, name)?;
        let t = hdr
            .target_id()
            .unwrap_or_else(|| format!("unknown EF_AMDGPU_MACH {:#x}", hdr.mach()));
        targets.insert(t, 1);
    }
    let dynamic = elf_read::dynamic_facts(data)?;
    let kpack_markers = match elf_read::Elf::open(data)?.section_range(kpack::MARKER_SECTION)? {
        None => Vec::new(),
        Some((off, size)) => kpack::markers_in_section(&data[off as usize..(off + size) as usize])?
            .into_iter()
            .map(|m| KpackMarkerInfo {
                kernel_name: m.kernel_name,
                search_paths: m.search_paths,
            })
            .collect(),
    };
    Ok(ElfInfo {
        path: name.to_string(),
        elf_type,
        machine,
        soname: dynamic.soname,
        needed: dynamic.needed,
        runpath: dynamic.runpath,
        rpath: dynamic.rpath,
        bundles,
        covers: covers_of(&targets),
        targets,
        kpack_markers,
    })
}

/// The generic targets among `targets` with what they run on.
fn covers_of(targets: &BTreeMap<String, u32>) -> BTreeMap<String, Vec<String>> {
    targets
        .keys()
        .filter_map(|t| Some((t.clone(), generic_covers(t)?.to_vec())))
        .collect()
}

/// A target id for people: `gfx12-generic (covers gfx1200, gfx1201)` for a
/// generic target, others as they are.
fn shown_target(t: &str) -> String {
    match generic_covers(t) {
        Some(c) => format!("{t} (covers {})", c.join(", ")),
        None => t.to_string(),
    }
}

/// Describes the wheel `file` (at `path`, opened by [`inspect`]).
fn inspect_wheel(file: std::fs::File, path: &Path) -> Result<(WheelInfo, Contents)> {
    let mut wheel = WheelReader::from_file(file, path).map_err(|e| match e {
        OpenError::Open(e) => anyhow::Error::new(e),
        OpenError::NotZip(e) => e.context("not a readable zip archive"),
        OpenError::BadNames(e) => e,
        OpenError::NotWheel(e) => anyhow::Error::new(e),
    })?;
    let dist = wheel.dist().to_string();
    let wheel_meta = wheel.read_text(&dist_info_path(&dist, "WHEEL"))?;
    let wheel_meta = wheel_format::WheelFile::parse(&wheel_meta);
    let metadata = wheel.read_text(&dist_info_path(&dist, "METADATA"))?;
    let record_name = dist_info_path(&dist, "RECORD");
    let record_text = wheel.read_text(&record_name)?;
    let filename = wheel.file_name().to_string();
    let mut info = wheel_info(filename, &dist, wheel_meta, &metadata)?;

    let record = wheel_format::Record::parse(&record_name, &record_text)?;
    let mut contents = Contents::default();
    wheel.walk(record, |m| inspect_member(m, &mut contents))?;
    info.files = std::mem::take(&mut contents.files);
    check_extension_abis(&info)?;
    Ok((info, contents))
}

/// Refuses a wheel with an extension module its ABI tag's interpreters
/// would not import (a cp314 module in a cp314t wheel, ...).
fn check_extension_abis(info: &WheelInfo) -> Result<()> {
    // A valid wheel name: wheel_identity checked it.
    let Ok(name) = wheel_format::WheelName::parse(&info.filename) else {
        return Ok(());
    };
    for f in &info.files {
        if let Some(problem) = wheel_format::extension_abi_problem(&f.path, name.abi) {
            bail!(
                "{} {problem}; build the module for the wheel's Python or tag the wheel for its ABI (rocm-wheel check lists every such module)",
                f.path
            );
        }
    }
    Ok(())
}

/// The wheel's identity and `WHEEL` fields (no files yet), checked.
fn wheel_info(
    filename: String,
    dist: &str,
    wheel_meta: wheel_format::WheelFile,
    metadata: &str,
) -> Result<WheelInfo> {
    let (name, version) = wheel_format::wheel_identity(&filename, dist, metadata)?;
    let wheel_version = wheel_meta.check()?.to_string();
    let parsed = wheel_format::WheelName::parse(&filename).ok();
    let free_threaded = parsed
        .as_ref()
        .is_some_and(|n| n.abi.split('.').all(wheel_format::is_free_threaded_abi));
    let variant_label = parsed.and_then(|n| n.variant.map(str::to_string));
    Ok(WheelInfo {
        filename,
        name,
        version,
        wheel_version,
        generator: wheel_meta.generator,
        root_is_purelib: wheel_meta.root_is_purelib.unwrap_or(false),
        build: wheel_meta.build,
        tags: wheel_meta.tags,
        free_threaded,
        variant_label,
        files: Vec::new(),
    })
}

/// What the members of a wheel hold, in member order.
#[derive(Default)]
struct Contents {
    files: Vec<FileEntry>,
    elf_files: Vec<ElfInfo>,
    bundle_files: Vec<BundleFileInfo>,
    kpack_archives: Vec<KpackArchiveInfo>,
}

/// Lists member `m`, verifies it against RECORD and inspects it if it is
/// an ELF or offload bundle file: ELF members are read with bounded
/// memory, bundle members kept whole (up to a cap), everything else only
/// hashed.
fn inspect_member(m: &mut Member<'_>, out: &mut Contents) -> Result<()> {
    let mname = m.name.to_string();
    out.files.push(FileEntry {
        path: mname.clone(),
        size: m.size()?,
    });
    let how = |head: &[u8]| match classify(head) {
        Content::Elf => How::Elf(ImageOptions {
            want_sections: &[".hip_fatbin", kpack::MARKER_SECTION],
            ..Default::default()
        }),
        Content::Bundle | Content::Kpack => How::Whole(KEEP_MAX),
        Content::Other => How::Hash,
    };
    match m.read(CLASSIFY_LEN, how, &|| format!("cannot read member {mname}"))? {
        Got::Elf(image) => out
            .elf_files
            .push(inspect_elf(&mname, &image).with_context(|| mname.clone())?),
        Got::Whole(data) if data.starts_with(kpack::archive::MAGIC) => out
            .kpack_archives
            .push(inspect_kpack(&mname, &data).with_context(|| mname.clone())?),
        Got::Whole(data) => out
            .bundle_files
            .push(inspect_bundle_file(&mname, &data).with_context(|| mname.clone())?),
        Got::TooLarge => bail!(
            "member {mname} is an offload bundle file or kpack archive of more than {} MiB; too large to inspect",
            KEEP_MAX >> 20
        ),
        Got::Hashed => {}
    }
    Ok(())
}

impl WheelInfo {
    /// The `Tag:` lines, saying whether they are a free-threaded CPython's.
    fn shown_tags(&self) -> String {
        let threading = if self.free_threaded {
            " (free-threaded CPython)"
        } else {
            ""
        };
        format!("{}{threading}", self.tags.join(", "))
    }
}

/// The wheel's name, version, tags, variant label and root-is-purelib lines.
fn write_wheel_header(s: &mut String, w: &WheelInfo) {
    use std::fmt::Write;
    let _ = writeln!(s, "wheel {}", w.filename);
    let _ = writeln!(s, "  name: {}", w.name);
    let _ = writeln!(s, "  version: {}", w.version);
    let _ = writeln!(s, "  tags: {}", w.shown_tags());
    if let Some(label) = &w.variant_label {
        let _ = writeln!(
            s,
            "  variant: {label} (PEP 825 draft: for variant-aware installers; pip skips the file)"
        );
    }
    let _ = writeln!(
        s,
        "  root-is-purelib: {}{}",
        w.root_is_purelib,
        w.build
            .as_ref()
            .map(|b| format!(", build {b}"))
            .unwrap_or_default()
    );
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports always serialize")
    }

    /// Human-readable description.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        if let Some(w) = &self.wheel {
            write_wheel_header(&mut s, w);
            let _ = writeln!(s, "  files ({}):", w.files.len());
            for f in &w.files {
                let _ = writeln!(s, "    {} ({} bytes)", f.path, f.size);
            }
        }
        for e in &self.elf_files {
            let _ = writeln!(s, "{}: ELF {}, {}", e.path, e.elf_type, e.machine);
            if let Some(so) = &e.soname {
                let _ = writeln!(s, "  soname: {so}");
            }
            let needed = if e.needed.is_empty() {
                "(none)".to_string()
            } else {
                e.needed.join(", ")
            };
            let _ = writeln!(s, "  needed: {needed}");
            if !e.runpath.is_empty() {
                let _ = writeln!(s, "  runpath: {}", e.runpath.join(":"));
            }
            if !e.rpath.is_empty() {
                let _ = writeln!(s, "  rpath: {}", e.rpath.join(":"));
            }
            if e.machine == "amdgpu" {
                for t in e.targets.keys() {
                    let _ = writeln!(s, "  code object for {}", shown_target(t));
                }
            } else if !e.kpack_markers.is_empty() {
                let _ = writeln!(
                    s,
                    "  kpack markers: {} (device code in .kpack archives)",
                    e.kpack_markers.len()
                );
                for m in &e.kpack_markers {
                    let _ = writeln!(s, "    {} in {}", m.kernel_name, m.search_paths.join(", "));
                }
            } else {
                write_bundles(&mut s, &e.bundles, &e.targets);
            }
        }
        for a in &self.kpack_archives {
            let _ = writeln!(
                s,
                "{}: kpack archive, group {}, targets {}, {} kernels ({})",
                a.path,
                a.group,
                a.targets.join(", "),
                a.kernels.len(),
                a.compression
            );
            for k in &a.kernels {
                let _ = writeln!(s, "    {} {} ({} bytes)", k.key, k.target, k.size);
            }
        }
        for b in &self.bundle_files {
            let _ = writeln!(s, "{}: offload bundle file", b.path);
            write_bundles(&mut s, &b.bundles, &b.targets);
        }
        s
    }
}

/// `offload bundles: 3 (2 zstd v3, 1 uncompressed)` and one line per target.
fn write_bundles(s: &mut String, bundles: &[BundleInfo], targets: &BTreeMap<String, u32>) {
    use std::fmt::Write;
    if bundles.is_empty() {
        let _ = writeln!(s, "  offload bundles: none");
        return;
    }
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for b in bundles {
        let k = match b.format_version {
            Some(v) => format!("{} v{v}", b.compression),
            None => "uncompressed".to_string(),
        };
        *kinds.entry(k).or_default() += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(
        s,
        "  offload bundles: {} ({})",
        bundles.len(),
        kinds.join(", ")
    );
    // Per bundle, so a thinned wheel shows what each bundle kept.
    for (i, b) in bundles.iter().enumerate() {
        let ts: Vec<&str> = b
            .entries
            .iter()
            .filter(|e| !e.target.is_empty())
            .map(|e| e.target.as_str())
            .collect();
        let _ = writeln!(
            s,
            "    bundle #{i} at {:#x} ({} bytes): {}",
            b.offset,
            b.size,
            if ts.is_empty() {
                "no device code".to_string()
            } else {
                ts.join(", ")
            }
        );
    }
    // What a generic target covers is said here once, not on every bundle
    // line: wheels repeat the same targets over many bundles.
    let _ = writeln!(s, "  gpu targets:");
    for (t, n) in targets {
        let plural = if *n == 1 { "" } else { "s" };
        let _ = writeln!(s, "    {}: {n} code object{plural}", shown_target(t));
    }
}
