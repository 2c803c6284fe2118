//! `rocm-wheel check`: thin shell over the `manylinux-check` crate.
//! Exit codes: 0 clean (warnings allowed), 1 error-level findings,
//! 2 usage error or unreadable input.

use std::path::PathBuf;

use manylinux_check::{check_wheel_file, Options, DEFAULT_ALLOWED_EXTERNALS};

#[derive(clap::Args)]
pub struct Args {
    /// Wheel to check.
    pub wheel: PathBuf,
    /// Policy to check the ELF files against (manylinux_2_17 … manylinux_2_39,
    /// or manylinux2014 etc.). Default: the most compatible manylinux tag the
    /// wheel claims.
    #[arg(long)]
    pub policy: Option<String>,
    /// soname glob that may stay external instead of being bundled
    /// (repeatable), added to the built-in ROCm list.
    #[arg(long = "allow-external", value_name = "GLOB")]
    pub allow_external: Vec<String>,
    /// Do not use the built-in ROCm list of allowed external libraries.
    #[arg(long)]
    pub no_default_allow: bool,
    /// Absolute rpath prefix that is acceptable, e.g. /opt/rocm (repeatable).
    #[arg(long = "allow-rpath-prefix", value_name = "PREFIX")]
    pub allow_rpath_prefix: Vec<String>,
    /// Print the report as JSON (schema: tools/crates/manylinux-check/README.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut allow_external: Vec<String> = if args.no_default_allow {
        Vec::new()
    } else {
        DEFAULT_ALLOWED_EXTERNALS
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    allow_external.extend(args.allow_external);
    let opts = Options {
        policy: args.policy,
        allow_external,
        allow_rpath_prefixes: args.allow_rpath_prefix,
    };
    let report = match check_wheel_file(&args.wheel, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rocm-wheel check: error: {e:#}");
            std::process::exit(2);
        }
    };
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_human());
    }
    if report.has_errors() {
        std::process::exit(1);
    }
    Ok(())
}
