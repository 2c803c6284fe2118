//! `rocm-wheel thin`: thin shell over the `wheel-thin` crate.

use std::path::PathBuf;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// amdgpu families (as in --//:gfx: gfx120X-all, gfx94X-dcgpu, …) and/or
    /// gfx targets (gfx1201, or generic ones such as gfx12-generic),
    /// comma-separated. A generic target's code objects stay when it covers
    /// a requested target (gfx12-generic covers gfx1200 and gfx1201).
    #[arg(long, value_name = "FAMILIES")]
    gfx: String,
    /// The wheel to thin.
    input: PathBuf,
    /// The output wheel (written atomically). Its file name must be the
    /// wheel's own, or with --name-suffix the renamed distribution's.
    #[arg(short, long)]
    output: PathBuf,
    /// Rename the distribution to NAME-SUFFIX (METADATA Name, the
    /// .dist-info directory, the file name), e.g. gfx120X-all, so that an
    /// index and pip tell per-family wheels apart.
    #[arg(long, value_name = "SUFFIX")]
    name_suffix: Option<String>,
    /// With a kpack host wheel (no device code of its own): its device
    /// wheels. Those serving --gfx are copied next to the output, which is
    /// the host wheel unchanged; the others are left out.
    #[arg(long = "device-wheel", value_name = "WHEEL")]
    device_wheels: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let report = wheel_thin::thin(&wheel_thin::Request {
        input: &args.input,
        output: &args.output,
        gfx: &args.gfx,
        name_suffix: args.name_suffix.as_deref(),
        device_wheels: &args.device_wheels,
    })?;
    print!("{}", report.to_human());
    Ok(())
}
