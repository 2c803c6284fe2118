//! `rocm-wheel bundle write`.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::ValueEnum;
use offload_bundle::{Compression, Method, WriteRequest};

#[derive(Clone, Copy, ValueEnum)]
enum CompressArg {
    None,
    Zstd,
    Zlib,
}

#[derive(clap::Args)]
pub struct Args {
    /// Output bundle file (written atomically).
    #[arg(long)]
    output: PathBuf,
    /// Store uncompressed (default) or as a compressed CCOB bundle.
    #[arg(long, value_enum, default_value = "none")]
    compress: CompressArg,
    /// CCOB format version for compressed output (3 allows > 4 GiB).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(2..=3))]
    format_version: u16,
    /// Compression level (zstd: 1..=22, default 3; zlib: 0..=9, default 6).
    #[arg(long)]
    level: Option<i32>,
    /// Host triple of the (empty) host entry.
    #[arg(long)]
    host_triple: String,
    /// ID=CODE_OBJECT, e.g. hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx90a.co (repeatable).
    #[arg(long = "entry", value_name = "ID=FILE", required = true)]
    entries: Vec<String>,
}

pub fn run(a: Args) -> Result<()> {
    let mut entries = Vec::with_capacity(a.entries.len());
    for e in &a.entries {
        let Some((id, path)) = e.split_once('=') else {
            bail!(
                "--entry `{e}` is not ID=FILE (e.g. hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx90a.co)"
            );
        };
        entries.push((id.to_string(), PathBuf::from(path)));
    }
    let method = match a.compress {
        CompressArg::None => None,
        CompressArg::Zstd => Some(Method::Zstd),
        CompressArg::Zlib => Some(Method::Zlib),
    };
    let compression = match (method, a.level) {
        (None, Some(_)) => bail!("--level needs --compress zstd or --compress zlib"),
        (None, None) => Compression::None,
        (Some(method), level) => Compression::Compressed {
            method,
            version: a.format_version,
            level,
        },
    };
    offload_bundle::write_bundle_file(&WriteRequest {
        output: a.output,
        host_triple: a.host_triple,
        entries,
        compression,
    })
}
