//! `rocm-wheel bundle extract`.

use std::path::PathBuf;

use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Bundle file, or ELF file (.so/.o) with a .hip_fatbin section.
    file: PathBuf,
    /// GPU processor (gfx90a), target id (gfx90a:xnack+) or full entry id.
    #[arg(long)]
    target: String,
    /// Where to write the code object (atomically).
    #[arg(long)]
    output: PathBuf,
    /// Index of the bundle to take it from when several hold the target.
    #[arg(long)]
    bundle: Option<usize>,
}

pub fn run(a: Args) -> Result<()> {
    let data = super::read_input(&a.file)?;
    let (b, k) = offload_bundle::find_file_entry(&data, &a.target, a.bundle)
        .with_context(|| a.file.display().to_string())?;
    offload_bundle::write_atomically(&a.output, b.entry_data(&b.entries[k]))
}
