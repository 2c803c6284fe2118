//! `rocm-wheel bundle list`.

use std::path::PathBuf;

use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Bundle file, or ELF file (.so/.o) with a .hip_fatbin section.
    file: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let data = super::read_input(&a.file)?;
    let mut bundles = Vec::new();
    offload_bundle::each_file_bundle(&data, true, |_, b| {
        bundles.push(b);
        Ok(())
    })
    .with_context(|| a.file.display().to_string())?;
    if a.json {
        println!("{}", offload_bundle::bundles_json(&bundles));
    } else if bundles.is_empty() {
        println!("{}: no .hip_fatbin section", a.file.display());
    } else {
        print!("{}", offload_bundle::bundles_text(&bundles));
    }
    Ok(())
}
