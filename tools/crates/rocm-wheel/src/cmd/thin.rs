//! `rocm-wheel thin`: a wheel with device code for some GPU families only.
//!
//! Members are streamed: unchanged ones are copied as their compressed
//! bytes; an ELF member with offload bundles is unpacked to a temporary file
//! next to the output, its `.hip_fatbin` section (only) read into memory,
//! thinned in place and written back, and the file deflated into the new
//! wheel. RECORD is rewritten for what changed and written last.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use offload_bundle::families::{describe_target, expand, generic_covers, gfx_sort_key, Requested};
use offload_bundle::thin::{find_hip_fatbin, section_targets, thin_section, ThinnedBundle};
use offload_bundle::Limits;
use wheel_format::{
    dist_info_path, dist_info_stem, normalize_name, rename_metadata, rewrite_record, validate_name,
    Digest, HashingWriter, WheelName,
};
use zip::write::SimpleFileOptions;

#[derive(clap::Args)]
pub struct Args {
    /// amdgpu families (as in --//:gfx: gfx120X-all, gfx94X-dcgpu, …) and/or
    /// gfx targets (gfx1201, or generic ones such as gfx12-generic),
    /// comma-separated. A generic target's code objects stay when it covers
    /// a requested target (gfx12-generic covers gfx1200 and gfx1201).
    #[arg(long, value_name = "FAMILIES")]
    gfx: String,
    /// The wheel to thin.
    input: PathBuf,
    /// The output wheel (written atomically). Its file name must be the
    /// wheel's own, or with --name-suffix the renamed distribution's.
    #[arg(short, long)]
    output: PathBuf,
    /// Rename the distribution to NAME-SUFFIX (METADATA Name, the
    /// .dist-info directory, the file name), e.g. gfx120X-all, so that an
    /// index and pip tell per-family wheels apart.
    #[arg(long, value_name = "SUFFIX")]
    name_suffix: Option<String>,
}

/// An ELF member whose bundles hold device code, unpacked.
struct Unpacked {
    file: File,
    section: (u64, u64),
    targets: Vec<Vec<String>>,
}

/// Who the input wheel is and what the output is called.
struct Naming {
    /// The input's file name.
    input_name: String,
    /// The input's `{name}-{version}` .dist-info stem.
    dist: String,
    /// The output's .dist-info stem (`dist` unless renamed).
    new_dist: String,
    /// The renamed distribution (`--name-suffix`), if any.
    rename: Option<String>,
    /// The input's METADATA text.
    metadata: String,
}

impl Naming {
    fn record_name(&self) -> String {
        dist_info_path(&self.dist, "RECORD")
    }

    fn metadata_name(&self) -> String {
        dist_info_path(&self.dist, "METADATA")
    }

    /// A member's name in the output (the .dist-info directory renamed).
    fn rename_member(&self, n: &str) -> String {
        match n.strip_prefix(&format!("{}.dist-info/", self.dist)) {
            Some(rest) if self.rename.is_some() => format!("{}.dist-info/{rest}", self.new_dist),
            _ => n.to_string(),
        }
    }
}

type Input = zip::ZipArchive<BufReader<File>>;

pub fn run(args: Args) -> Result<()> {
    let requested = expand(&args.gfx)?;
    let keep: BTreeSet<String> = requested
        .iter()
        .flat_map(|r| r.targets.iter().cloned())
        .collect();
    let f =
        File::open(&args.input).with_context(|| format!("cannot open {}", args.input.display()))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(f))
        .with_context(|| format!("{}: not a zip archive", args.input.display()))?;
    let names: Vec<String> = zip.file_names().map(str::to_string).collect();
    let naming = name_output(&args, &mut zip, &names)?;
    let out_dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Every refusal comes before anything is written.
    let limits = Limits::default();
    let mut unpacked = unpack_device_code(&mut zip, &out_dir, &limits)?;
    check_requested(&args, &requested, &naming.input_name, &unpacked)?;
    let keep_fn = |p: &str| keeps(&keep, p);
    let report = write_thinned(
        &args.output,
        &mut zip,
        &names,
        &naming,
        &mut unpacked,
        &|data: &mut Vec<u8>| thin_section(data, &keep_fn, &limits),
    )?;
    print_report(&report);
    Ok(())
}

/// Reads the input's identity and checks that `-o` is named for the output
/// wheel (renamed with `--name-suffix`).
fn name_output(args: &Args, zip: &mut Input, names: &[String]) -> Result<Naming> {
    let dist = wheel_format::find_dist_info(names.iter().map(String::as_str))?;
    let input_name = file_name(&args.input)?;
    let metadata = wheel_inspect::members::read_text(zip, &dist_info_path(&dist, "METADATA"))?;
    let (name, version) = wheel_format::wheel_identity(&input_name, &dist, &metadata)?;
    let rename = match &args.name_suffix {
        None => None,
        Some(s) => {
            let new_name = format!("{name}-{s}");
            validate_name(&new_name).context("--name-suffix gives an invalid name")?;
            Some(new_name)
        }
    };
    let new_dist = match &rename {
        Some(n) => dist_info_stem(n, &version),
        None => dist.clone(),
    };
    let expected_file = match &rename {
        Some(n) => WheelName {
            name: &normalize_name(n),
            ..WheelName::parse(&input_name)?
        }
        .to_string(),
        None => input_name.clone(),
    };
    if file_name(&args.output)? != expected_file {
        bail!(
            "-o {}: the output must be named {expected_file} (pip checks that the file name \
             matches the wheel's name and version)",
            args.output.display()
        );
    }
    Ok(Naming {
        input_name,
        dist,
        new_dist,
        rename,
        metadata,
    })
}

/// Unpacks the ELF members whose `.hip_fatbin` holds device code into
/// temporary files in `out_dir`, keyed by member index, with their targets.
fn unpack_device_code(
    zip: &mut Input,
    out_dir: &Path,
    limits: &Limits,
) -> Result<HashMap<usize, Unpacked>> {
    let mut unpacked = HashMap::new();
    for i in 0..zip.len() {
        let mut m = zip.by_index(i)?;
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut m, &mut magic)?;
        if n < 4 || &magic != b"\x7fELF" {
            continue;
        }
        let member = m.name().to_string();
        let mut file = tempfile::tempfile_in(out_dir)
            .with_context(|| format!("cannot create a temporary file in {}", out_dir.display()))?;
        {
            let mut w = BufWriter::new(&mut file);
            w.write_all(&magic)?;
            std::io::copy(&mut m, &mut w).with_context(|| format!("cannot unpack {member}"))?;
            w.flush()?;
        }
        drop(m);
        let Some(section) = find_hip_fatbin(&mut file).with_context(|| member.clone())? else {
            continue;
        };
        let data = read_range(&mut file, section)?;
        let targets = section_targets(&data, limits)
            .with_context(|| format!("{member}: reading .hip_fatbin"))?;
        if targets.iter().any(|t| !t.is_empty()) {
            unpacked.insert(
                i,
                Unpacked {
                    file,
                    section,
                    targets,
                },
            );
        }
    }
    Ok(unpacked)
}

/// Whether a code object for processor `p` serves `target`: it is that
/// target's own, or a generic one covering it.
fn serves(p: &str, target: &str) -> bool {
    p == target || generic_covers(p).is_some_and(|c| c.iter().any(|t| t == target))
}

/// Whether a code object for processor `p` stays: it serves a requested
/// target. A specific code object for the same target stays too; the
/// runtime prefers it.
fn keeps(requested: &BTreeSet<String>, p: &str) -> bool {
    requested.iter().any(|t| serves(p, t))
}

/// Whether the wheel's processors `present` hold code that runs on `target`.
fn has_code_for(present: &BTreeSet<String>, target: &str) -> bool {
    present.iter().any(|p| serves(p, target))
}

/// Refuses a wheel without device code, and a requested family or target
/// of which the wheel holds no code (naming what it has).
fn check_requested(
    args: &Args,
    requested: &[Requested],
    input_name: &str,
    unpacked: &HashMap<usize, Unpacked>,
) -> Result<()> {
    let mut present: BTreeSet<String> = BTreeSet::new();
    for u in unpacked.values() {
        for t in u.targets.iter().flatten() {
            present.insert(t.split(':').next().unwrap_or_default().to_string());
        }
    }
    if present.is_empty() {
        bail!(
            "{}: no member holds GPU code (no ELF file with offload bundles in .hip_fatbin); \
             there is nothing to thin",
            args.input.display()
        );
    }
    let mut have: Vec<&String> = present.iter().collect();
    have.sort_by_key(|t| gfx_sort_key(t));
    let have = have
        .iter()
        .map(|s| describe_target(s))
        .collect::<Vec<_>>()
        .join(", ");
    for r in requested {
        if !r.targets.iter().any(|t| has_code_for(&present, t)) {
            let what = if r.family {
                format!("family {} ({})", r.name, r.targets.join(", "))
            } else {
                format!("target {}", r.name)
            };
            bail!(
                "--gfx {}: no bundle of {input_name} holds code for {what}; the wheel has code \
                 for {have}",
                args.gfx
            );
        }
    }
    Ok(())
}

/// What was thinned: per member, its bundles.
type Report = Vec<(String, Vec<ThinnedBundle>)>;

/// Writes the output wheel atomically: thinned members deflated anew, a
/// renamed METADATA, everything else copied raw; RECORD rewritten, last.
fn write_thinned(
    output: &Path,
    zip: &mut Input,
    names: &[String],
    naming: &Naming,
    unpacked: &mut HashMap<usize, Unpacked>,
    thin: &dyn Fn(&mut Vec<u8>) -> Result<Vec<ThinnedBundle>>,
) -> Result<Report> {
    let record_name = naming.record_name();
    let metadata_name = naming.metadata_name();
    let record_text = wheel_inspect::members::read_text(zip, &record_name)?;
    let mut changed: BTreeMap<String, (String, u64)> = BTreeMap::new();
    let mut report = Report::new();
    atomic_write::AtomicFile::write_with(output, 0o644, |out| {
        let mut w = zip::ZipWriter::new(BufWriter::new(out));
        for (i, name) in names.iter().enumerate() {
            if *name == record_name {
                continue;
            }
            let new_name = naming.rename_member(name);
            if let Some(u) = unpacked.get_mut(&i) {
                let mut data = read_range(&mut u.file, u.section)?;
                let thinned = thin(&mut data).with_context(|| format!("{name}: .hip_fatbin"))?;
                if thinned.iter().any(|t| !t.dropped.is_empty()) {
                    u.file.seek(SeekFrom::Start(u.section.0))?;
                    u.file.write_all(&data)?;
                    drop(data);
                    w.start_file(new_name.as_str(), options_of(zip, i)?)?;
                    u.file.seek(SeekFrom::Start(0))?;
                    let entry = copy_hashed(&mut BufReader::new(&mut u.file), &mut w)?;
                    changed.insert(new_name, entry);
                    report.push((name.clone(), thinned));
                    continue;
                }
            }
            if let (Some(rename), true) = (&naming.rename, *name == metadata_name) {
                let text = rename_metadata(&naming.metadata, rename)?;
                w.start_file(new_name.as_str(), options_of(zip, i)?)?;
                w.write_all(text.as_bytes())?;
                let hash = Digest::of(text.as_bytes()).record_hash();
                changed.insert(new_name, (hash, text.len() as u64));
                continue;
            }
            let m = zip.by_index_raw(i)?;
            if new_name == *name {
                w.raw_copy_file(m)?;
            } else {
                w.raw_copy_file_rename(m, new_name.as_str())?;
            }
        }
        let rename_member = |n: &str| naming.rename_member(n);
        let new_record = rewrite_record(&record_name, &record_text, &rename_member, &changed)?;
        let record_index = names.iter().position(|n| *n == record_name).unwrap();
        w.start_file(
            naming.rename_member(&record_name).as_str(),
            options_of(zip, record_index)?,
        )?;
        w.write_all(new_record.as_bytes())?;
        w.finish()?.flush()?;
        Ok(())
    })?;
    Ok(report)
}

/// Copies `r` into `w`, returning its RECORD hash and size.
fn copy_hashed(r: &mut impl Read, w: &mut impl Write) -> Result<(String, u64)> {
    let mut hashed = HashingWriter::new(w);
    std::io::copy(r, &mut hashed)?;
    let digest = hashed.digest();
    Ok((digest.record_hash(), digest.len()))
}

fn print_report(report: &Report) {
    for (member, bundles) in report {
        println!("{member}:");
        for b in bundles {
            println!(
                "  bundle #{} at {:#x}: kept {}; dropped {}; {} -> {} bytes",
                b.index,
                b.offset,
                if b.kept.is_empty() {
                    "(no device code)".to_string()
                } else {
                    b.kept.join(", ")
                },
                if b.dropped.is_empty() {
                    "nothing".to_string()
                } else {
                    b.dropped.len().to_string() + " code objects"
                },
                b.old_size,
                b.new_size
            );
        }
    }
}

/// How a rewritten member is stored: deflated, with the original's time
/// and permissions (so equal input gives equal output).
fn options_of<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, i: usize) -> Result<SimpleFileOptions> {
    let m = zip.by_index_raw(i)?;
    Ok(SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(m.last_modified().unwrap_or_default())
        .unix_permissions(m.unix_mode().unwrap_or(0o644))
        .large_file(m.size() >= 0xFFFF_FFFF))
}

fn file_name(p: &Path) -> Result<String> {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{}: no file name", p.display()))
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_range(f: &mut File, (off, len): (u64, u64)) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    usize::try_from(len)
        .ok()
        .and_then(|n| v.try_reserve_exact(n).ok())
        .with_context(|| format!("cannot allocate {len} bytes for .hip_fatbin"))?;
    f.seek(SeekFrom::Start(off))?;
    f.take(len).read_to_end(&mut v)?;
    if v.len() as u64 != len {
        bail!("truncated ELF: .hip_fatbin ends past the end of the file");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_code_objects_stay_for_the_targets_they_cover() {
        let req: BTreeSet<String> = ["gfx1201", "gfx90a"].map(String::from).into();
        assert!(keeps(&req, "gfx1201"));
        assert!(keeps(&req, "gfx12-generic"));
        assert!(!keeps(&req, "gfx1200"));
        assert!(!keeps(&req, "gfx9-4-generic"));
        assert!(!keeps(&req, "gfx12-5-generic"));
        // Asked for by name.
        let req: BTreeSet<String> = ["gfx12-generic".to_string()].into();
        assert!(keeps(&req, "gfx12-generic"));
        assert!(!keeps(&req, "gfx1200"));

        let present: BTreeSet<String> = ["gfx942", "gfx12-generic"].map(String::from).into();
        assert!(has_code_for(&present, "gfx1200"));
        assert!(has_code_for(&present, "gfx12-generic"));
        assert!(has_code_for(&present, "gfx942"));
        assert!(!has_code_for(&present, "gfx950"));
        assert!(!has_code_for(&present, "gfx1100"));
    }
}
