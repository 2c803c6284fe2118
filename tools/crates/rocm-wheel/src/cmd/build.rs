//! `rocm-wheel build`: thin shell over `wheel_writer::build`, adding the
//! ROCm SDK requirements the manifest's `rocm_sdk` asks for (computed by
//! rocm-layout from what the files need).

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// JSON manifest written by the Starlark rule.
    #[arg(long)]
    manifest: PathBuf,
    /// Output wheel; its file name must be the one the manifest implies.
    #[arg(long)]
    output: PathBuf,
    /// 0 stores entries uncompressed, 1-9 are deflate levels.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=9))]
    compression_level: u32,
    /// Threads compressing large entries (default: available cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut manifest = wheel_writer::Manifest::load(&args.manifest)?;
    if let Some(sdk) = manifest.rocm_sdk.clone() {
        let request = rocm_layout::SdkRequest {
            extra: &sdk.extra,
            version: &sdk.version,
            families: &sdk.families,
            sdk_version: sdk.sdk_version.as_deref(),
        };
        let files = manifest.files.iter().map(|f| f.src.as_str());
        let requires = rocm_layout::sdk_requirements(files, &request)?;
        manifest.add_requirements(&sdk.extra, requires);
    }
    let mut opts = wheel_writer::Options {
        compression_level: args.compression_level,
        source_date_epoch: wheel_writer::Options::source_date_epoch_from_env()?,
        ..Default::default()
    };
    if let Some(j) = args.jobs {
        opts.jobs = j as usize;
    }
    wheel_writer::build(&manifest, &args.output, &opts)
}
