//! `rocm-wheel inspect`: describe a wheel, shared object or object file.

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A wheel (.whl), shared object (.so) or object file (.o).
    path: PathBuf,
    /// Machine-readable output (schema documented in the wheel-inspect crate).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let report = wheel_inspect::inspect(&args.path)?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
