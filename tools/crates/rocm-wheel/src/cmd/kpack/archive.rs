//! `rocm-wheel kpack archive`: one `.kpack` archive ([`kpack::ArchiveWriter`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use kpack::{ArchiveWriter, Compression};

#[derive(Clone, Copy, ValueEnum)]
enum CompressionArg {
    None,
    Zstd,
}

#[derive(clap::Args)]
pub struct Args {
    /// group_name of the TOC (the package the archive belongs to).
    #[arg(long)]
    group: String,
    /// gfx_arch_family of the TOC (the target, for a per-target archive).
    #[arg(long)]
    family: String,
    /// A GPU target the archive serves (repeat); the loader matches on these.
    #[arg(long = "target", required = true)]
    targets: Vec<String>,
    #[arg(long, value_enum, default_value = "zstd")]
    compression: CompressionArg,
    /// KEY@TARGET=FILE: the code object FILE as KEY (`<name>#<index>`) for TARGET (repeat).
    #[arg(long = "kernel", required = true)]
    kernels: Vec<String>,
    #[arg(long)]
    output: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let compression = match a.compression {
        CompressionArg::None => Compression::None,
        CompressionArg::Zstd => Compression::ZstdPerKernel,
    };
    let mut w = ArchiveWriter::new(&a.group, &a.family, &a.targets, compression);
    for spec in &a.kernels {
        let (key, target, file) = kpack::parse_kernel_spec(spec)?;
        w.add(key, target, file)
            .with_context(|| format!("--kernel {spec}"))?;
    }
    w.write(&a.output)
}
