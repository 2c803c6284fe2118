//! `rocm-wheel variant`: a kpack host wheel as a variant wheel (PEP 825 /
//! PEP 850 drafts, `variant.json` schema v0.2.0, as variantlib 0.2.2 and
//! rocm-bootstrap 0.3.0 implement them): [`kpack::device_set::write_variant`].

use std::path::PathBuf;

use anyhow::Result;
use kpack::device_set::{FEATURE, NAMESPACE};

#[derive(clap::Args)]
pub struct Args {
    /// The host wheel of a kpack build (with its device extras or not),
    /// not a variant wheel.
    input: PathBuf,
    /// The variant wheel to write (atomically): the input's file name with
    /// `-LABEL` before `.whl`.
    #[arg(short, long)]
    output: PathBuf,
    /// The variant label: 1-16 of 0-9 a-z _ . (`rocm`); `null` writes the
    /// null variant (no properties, no device wheels).
    #[arg(long)]
    label: String,
    /// A device wheel of the host (`<host>-device-<bundle>` at the host's
    /// version); repeat for each. Its archives' targets become the
    /// variant's `amd :: gfx_arch` values.
    #[arg(long = "device-wheel", value_name = "WHEEL")]
    device_wheels: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let values = kpack::device_set::write_variant(
        &args.input,
        &args.output,
        &args.label,
        &args.device_wheels,
    )?;
    let shown = if values.is_empty() {
        "(none: the null variant)".to_string()
    } else {
        values.join(", ")
    };
    let file = args
        .output
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    println!(
        "{file}: variant {}, {NAMESPACE} :: {FEATURE} :: {shown}",
        args.label
    );
    Ok(())
}
