//! `rocm-wheel device-extras`: a kpack host wheel whose METADATA reaches
//! its device wheels through AMD's `device-<target>` extras
//! ([`kpack::device_set::write_device_extras`]).

use std::path::PathBuf;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The host wheel (a kpack build's: its device code is in device wheels).
    input: PathBuf,
    /// The output wheel (written atomically), named as the input: only
    /// METADATA changes.
    #[arg(short, long)]
    output: PathBuf,
    /// A device wheel of the host (any name, e.g. `<host>-device-gfx1201`
    /// or `amd-torch-device-gfx12`), pinning the host's exact version and
    /// holding `.kpack` archives; repeat for each.
    #[arg(long = "device-wheel", value_name = "WHEEL", required = true)]
    device_wheels: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let extras =
        kpack::device_set::write_device_extras(&args.input, &args.output, &args.device_wheels)?;
    let file = args
        .output
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    println!("{file}: extras {}", extras.join(", "));
    Ok(())
}
