//! `rocm-wheel check`: thin shell over the `manylinux-check` crate.
//! Exit codes: 0 clean (warnings allowed), 1 error-level findings,
//! 2 usage error or unreadable input.

use std::io::Write;
use std::path::PathBuf;

use manylinux_check::{
    check_wheel_file, environment, Options, EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_FINDINGS,
};

#[derive(clap::Args)]
pub struct Args {
    /// Wheel to check.
    pub wheel: PathBuf,
    /// Policy to check the ELF files against, in the wheel's architecture
    /// (manylinux_2_17 … manylinux_2_41, or manylinux2014 etc.; x86_64 also
    /// has manylinux_2_5 and manylinux_2_12). Default: the most compatible
    /// manylinux tag the wheel claims.
    #[arg(long)]
    pub policy: Option<String>,
    /// soname glob that may stay external instead of being bundled
    /// (repeatable), added to the built-in ROCm list.
    #[arg(long = "allow-external", value_name = "GLOB")]
    pub allow_external: Vec<String>,
    /// Do not use the built-in ROCm lists: allowed external libraries, and
    /// the allowed absolute rpath /opt/rocm/lib.
    #[arg(long)]
    pub no_default_allow: bool,
    /// Absolute rpath prefix that is acceptable, e.g. /opt/rocm-7.2.0
    /// (repeatable; whole path components; /opt/rocm/lib is built in).
    #[arg(long = "allow-rpath-prefix", value_name = "PREFIX")]
    pub allow_rpath_prefix: Vec<String>,
    /// Print the report as JSON (schema: tools/crates/manylinux-check/README.md).
    #[arg(long)]
    pub json: bool,
    /// Instead of the policy check: where each DT_NEEDED of the ELF files
    /// is found once the wheel is installed into this site-packages,
    /// through the files' RUNPATH; exit 1 if any is not found.
    #[arg(long, value_name = "SITE_PACKAGES", conflicts_with = "json")]
    pub resolve: Option<PathBuf>,
    /// With --resolve: the root absolute RUNPATH entries (/opt/rocm/lib)
    /// are looked up under (default /).
    #[arg(long, value_name = "DIR", requires = "resolve", default_value = "/")]
    pub root: PathBuf,
    /// Instead of the policy check: the wheel is a kpack host wheel; check
    /// that every HIPK wrapper of its binaries resolves, installed with
    /// these device wheels (repeatable), to an archive holding its key for
    /// each GPU target, as rocm-kpack's loader resolves it.
    #[arg(long = "device-wheel", value_name = "WHEEL", conflicts_with_all = ["json", "resolve"])]
    pub device_wheels: Vec<PathBuf>,
    /// With --device-wheel: the GPU targets (families allowed) that must
    /// resolve (default: every target the device wheels' archives serve).
    #[arg(long, value_name = "GFX", requires = "device_wheels")]
    pub gfx: Option<String>,
}

/// Runs the check and returns the process exit code.
pub fn run(args: Args) -> u8 {
    execute(args, &mut std::io::stdout(), &mut std::io::stderr()) as u8
}

/// `--resolve`: the environment report; 1 if a library is not found.
fn resolve(args: &Args, site: &std::path::Path, out: &mut dyn Write) -> anyhow::Result<i32> {
    let wheel = manylinux_check::wheel::read_wheel(&args.wheel)?;
    let env = environment::Environment {
        site_packages: site.to_path_buf(),
        root: args.root.clone(),
        arch: environment::system_arch()?,
    };
    let (text, complete) = environment::to_human(&environment::resolve(&wheel, &env), &env);
    out.write_all(text.as_bytes())?;
    Ok(if complete { EXIT_CLEAN } else { EXIT_FINDINGS })
}

/// Run the check, print the report, and return the exit code.
fn execute(args: Args, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if !args.device_wheels.is_empty() {
        return super::check_kpack::run(&args.wheel, &args.device_wheels, args.gfx.as_deref(), out)
            .unwrap_or_else(|e| {
                let _ = writeln!(err, "rocm-wheel check: error: {e:#}");
                EXIT_BAD_INPUT
            });
    }
    if let Some(site) = &args.resolve {
        return resolve(&args, site, out).unwrap_or_else(|e| {
            let _ = writeln!(err, "rocm-wheel check: error: {e:#}");
            EXIT_BAD_INPUT
        });
    }
    let opts = Options::with_extra(
        args.policy,
        args.no_default_allow,
        args.allow_external,
        args.allow_rpath_prefix,
    );
    let report = match check_wheel_file(&args.wheel, &opts) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "rocm-wheel check: error: {e:#}");
            return EXIT_BAD_INPUT;
        }
    };
    let text = if args.json {
        format!("{}\n", report.to_json())
    } else {
        report.to_human()
    };
    if let Err(e) = out.write_all(text.as_bytes()) {
        let _ = writeln!(err, "rocm-wheel check: error: writing the report: {e}");
        return EXIT_BAD_INPUT;
    }
    report.exit_code()
}

#[cfg(test)]
mod tests;
