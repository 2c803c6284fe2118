//! `rocm-wheel kernels check`: hip_library's host/device consistency check.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use offload_bundle::kernels::check_kernels;

use super::read_input;

pub type Args = super::Nested<Cmd>;

#[derive(Subcommand)]
pub enum Cmd {
    /// Fail unless every kernel the host object registers has a kernel
    /// descriptor in the code object of every target.
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The host object of one HIP source (clang --cuda-host-only).
    #[arg(long)]
    host: PathBuf,
    /// TARGET=CODE_OBJECT, e.g. gfx1201=k.gfx1201.co (repeatable).
    #[arg(long = "device", value_name = "TARGET=FILE", required = true)]
    devices: Vec<String>,
    /// The source, as messages name it.
    #[arg(long)]
    source: String,
    /// The library, as messages name it (e.g. //pkg:kernels).
    #[arg(long)]
    library: String,
    /// Report of the kernels found (written atomically when the check passes).
    #[arg(long)]
    output: PathBuf,
    /// llvm-cxxfilt, to show kernel names demangled.
    #[arg(long)]
    demangler: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Check(a) => check(a),
    }
}

fn check(a: CheckArgs) -> Result<()> {
    let mut devices = Vec::new();
    for d in &a.devices {
        let (target, file) = d
            .split_once('=')
            .with_context(|| format!("--device {d}: expected TARGET=FILE"))?;
        devices.push((target.to_string(), read_input(Path::new(file))?));
    }
    let report = check_kernels(&read_input(&a.host)?, &devices)?;
    if !report.missing.is_empty() {
        let demangler = a.demangler.as_deref();
        bail!(
            "{}",
            report.mismatch_message(&a.library, &a.source, demangler)
        );
    }
    atomic_write::write_bytes(&a.output, report.host_listing().as_bytes(), 0o644)
}
