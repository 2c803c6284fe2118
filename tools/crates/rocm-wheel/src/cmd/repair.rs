//! `rocm-wheel repair`: thin shell over the `wheel-repair` crate.

use std::path::PathBuf;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The wheel to repair.
    input: PathBuf,
    /// The repaired wheel (written atomically): a file named as the
    /// repaired wheel (its tag may change), or an existing directory.
    #[arg(short, long)]
    output: PathBuf,
    /// The platform tag to meet, e.g. manylinux_2_28_x86_64 or
    /// manylinux2014. Default: the claimed manylinux tag if the wheel
    /// meets it, else the most compatible one it meets. Refused, with the
    /// reason, if the ELF files cannot meet it.
    #[arg(long, value_name = "TAG")]
    plat: Option<String>,
    /// Print the report as JSON (schema: tools/crates/wheel-repair/README.md).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let report = wheel_repair::repair(&args.input, &args.output, args.plat.as_deref())?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_human());
    }
    Ok(())
}
