//! `rocm-wheel kpack list`.

use std::path::PathBuf;

use anyhow::Result;
use kpack::Archive;

#[derive(clap::Args)]
pub struct Args {
    archive: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let ar = Archive::open(&a.archive)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&ar.toc)?);
    } else {
        print!("{}", ar.toc.describe(&a.archive.display().to_string()));
    }
    Ok(())
}
