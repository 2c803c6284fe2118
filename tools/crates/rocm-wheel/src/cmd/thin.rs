//! `rocm-wheel thin`: a wheel with device code for some GPU families only.
//!
//! An ELF member with offload bundles is unpacked to a temporary file next
//! to the output, its `.hip_fatbin` section (only) read into memory,
//! thinned in place and written back; the wheel rewriter
//! ([`wheel_writer::rewrite`]) copies every other member as its compressed
//! bytes, reuses the thinned members' deflate streams outside
//! `.hip_fatbin` (deflating only the section and its surroundings again, in
//! parallel) and rewrites RECORD.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use offload_bundle::families::{
    describe_target, expand, gfx_sort_key, has_code_for, keeps, Requested,
};
use offload_bundle::thin::{
    find_hip_fatbin, read_hip_fatbin, section_targets, thin_section, ThinnedBundle,
};
use offload_bundle::Limits;
use wheel_writer::rewrite::WheelRewriter;

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

pub fn run(args: Args) -> Result<()> {
    let requested = expand(&args.gfx)?;
    let keep: BTreeSet<String> = requested
        .iter()
        .flat_map(|r| r.targets.iter().cloned())
        .collect();
    let mut wheel = WheelRewriter::open(&args.input)?;
    if let Some(s) = &args.name_suffix {
        let new_name = format!("{}-{s}", wheel.name());
        wheel
            .rename(&new_name)
            .context("--name-suffix gives an invalid name")?;
    }
    let expected_file = wheel.output_file_name()?;
    if file_name(&args.output)? != expected_file {
        bail!(
            "-o {}: the output must be named {expected_file} (pip checks that the file name \
             matches the wheel's name and version)",
            args.output.display()
        );
    }
    let out_dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Every refusal comes before anything is written.
    let limits = Limits::default();
    let unpacked = unpack_device_code(&mut wheel, &out_dir, &limits)?;
    check_requested(&args, &requested, wheel.file_name(), &unpacked)?;
    let keep_fn = |p: &str| keeps(&keep, p);
    let report = thin_members(&mut wheel, unpacked, &|data: &mut Vec<u8>| {
        thin_section(data, &keep_fn, &limits)
    })?;
    wheel.finish(&args.output)?;
    print_report(&report);
    Ok(())
}

/// Unpacks the ELF members whose `.hip_fatbin` holds device code into
/// temporary files in `out_dir`, keyed by member index, with their targets.
fn unpack_device_code(
    wheel: &mut WheelRewriter,
    out_dir: &Path,
    limits: &Limits,
) -> Result<HashMap<usize, Unpacked>> {
    let mut unpacked = HashMap::new();
    for i in 0..wheel.names().len() {
        let Some(mut file) = wheel.unpack_if(i, b"\x7fELF", out_dir)? else {
            continue;
        };
        let member = &wheel.names()[i];
        let Some(section) = find_hip_fatbin(&mut file).with_context(|| member.clone())? else {
            continue;
        };
        let data = read_hip_fatbin(&mut file, section)?;
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

/// Thins each unpacked member's `.hip_fatbin` in place (in member order)
/// and has the rewriter replace the members that lost code objects.
fn thin_members(
    wheel: &mut WheelRewriter,
    unpacked: HashMap<usize, Unpacked>,
    thin: &dyn Fn(&mut Vec<u8>) -> Result<Vec<ThinnedBundle>>,
) -> Result<Report> {
    let mut report = Report::new();
    let mut unpacked: Vec<(usize, Unpacked)> = unpacked.into_iter().collect();
    unpacked.sort_by_key(|(i, _)| *i);
    for (i, mut u) in unpacked {
        let name = wheel.names()[i].clone();
        let mut data = read_hip_fatbin(&mut u.file, u.section)?;
        let thinned = thin(&mut data).with_context(|| format!("{name}: .hip_fatbin"))?;
        if thinned.iter().any(|t| !t.dropped.is_empty()) {
            u.file.seek(SeekFrom::Start(u.section.0))?;
            u.file.write_all(&data)?;
            let (off, len) = u.section;
            wheel.replace_unpacked(&name, u.file, off..off + len)?;
            report.push((name, thinned));
        }
    }
    Ok(report)
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

fn file_name(p: &Path) -> Result<String> {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{}: no file name", p.display()))
}
