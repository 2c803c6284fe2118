//! `rocm-wheel glibc-floor`: lower a binary's glibc floor by dropping the
//! version of its weak references (elf-edit's `lower_glibc_floor`).

use std::path::PathBuf;

use anyhow::{bail, Result};

#[derive(clap::Args)]
pub struct Args {
    /// The ELF file (x86-64 shared library or executable).
    file: PathBuf,
    /// The oldest glibc the output must load on, e.g. 2.17 (manylinux2014).
    #[arg(long, value_name = "MAJOR.MINOR")]
    max: String,
    /// The output file (written atomically; the input is not changed).
    #[arg(short, long)]
    output: PathBuf,
}

fn parse_max(s: &str) -> Result<(u32, u32)> {
    match elf_edit::glibc_version(&format!("GLIBC_{s}")) {
        Some(v) if s.split('.').count() == 2 => Ok(v),
        _ => bail!("--max {s}: give a glibc version as MAJOR.MINOR, e.g. 2.17"),
    }
}

pub fn run(args: Args) -> Result<()> {
    let max = parse_max(&args.max)?;
    let report = elf_edit::lower_glibc_floor(&args.file, &args.output, max)?;
    for s in &report.unversioned {
        println!("unversioned: {s}");
    }
    for d in &report.dropped {
        println!("dropped version need: {d}");
    }
    println!(
        "{}: needs glibc {} at most",
        args.output.display(),
        report
            .floor
            .as_deref()
            .map_or("(no versioned glibc symbol)".to_string(), |f| f
                .trim_start_matches("GLIBC_")
                .to_string())
    );
    Ok(())
}
