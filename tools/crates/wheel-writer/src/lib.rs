//! wheel-writer: builds a PEP 427 wheel from a JSON manifest, reproducibly
//! (fixed order, timestamps and permissions) and atomically, through
//! parallel-zip's writer. The wheel's requirements are the manifest's and
//! whatever the caller adds ([`Manifest::add_requirements`]): ROCm's, from
//! rocm-layout, are the caller's to compute.

mod content;
mod dist_info;
mod manifest;
mod plan;

use anyhow::{bail, Context, Result};
use parallel_zip::{ParallelZipWriter, Written};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

pub use dist_info::GENERATOR;
pub use manifest::{Description, FileEntry, Manifest, Metadata, RocmSdk};
pub use plan::{validate_archive_path, wheel_file_name};

use plan::{plan, Item};

/// How [`build`] writes: compression, threads, timestamps.
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
    let mut zip = ParallelZipWriter::new(out, opts.source_date_epoch, opts.compression_level);
    zip.set_jobs(opts.jobs);
    let mut record = wheel_format::RecordWriter::new();
    let mut add_row = |path: &str, w: &Written| {
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
    zip: &mut ParallelZipWriter<W>,
    it: &Item,
) -> Result<Written> {
    let f = File::open(&it.src)
        .with_context(|| format!("cannot open {} (for {})", it.src.display(), it.arc))?;
    zip.add_reader(&it.arc, f, it.size, it.mode)
}
