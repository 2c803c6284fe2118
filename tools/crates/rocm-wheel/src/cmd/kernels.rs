//! `rocm-wheel kernels check`: hip_library's host/device consistency check.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use offload_bundle::kernels::{check_kernels, KernelReport};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Fail unless every kernel the host object registers has a kernel
    /// descriptor in the code object of every target.
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The host object of one HIP source (clang --cuda-host-only).
    #[arg(long)]
    host: PathBuf,
    /// TARGET=CODE_OBJECT, e.g. gfx1201=k.gfx1201.co (repeatable).
    #[arg(long = "device", value_name = "TARGET=FILE", required = true)]
    devices: Vec<String>,
    /// The source, as messages name it.
    #[arg(long)]
    source: String,
    /// The library, as messages name it (e.g. //pkg:kernels).
    #[arg(long)]
    library: String,
    /// Report of the kernels found (written atomically when the check passes).
    #[arg(long)]
    output: PathBuf,
    /// llvm-cxxfilt, to show kernel names demangled.
    #[arg(long)]
    demangler: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Check(a) => check(a),
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

fn check(a: CheckArgs) -> Result<()> {
    let mut devices = Vec::new();
    for d in &a.devices {
        let (target, file) = d
            .split_once('=')
            .with_context(|| format!("--device {d}: expected TARGET=FILE"))?;
        devices.push((target.to_string(), read(Path::new(file))?));
    }
    let report = check_kernels(&read(&a.host)?, &devices)?;
    if !report.missing.is_empty() {
        bail!("{}", mismatch_message(&a, &report));
    }
    let mut text = String::new();
    for k in &report.host {
        let _ = writeln!(text, "{k}");
    }
    atomic_write::write_bytes(&a.output, text.as_bytes(), 0o644)
}

/// Names as `demangled [mangled]` when a demangler is given and works.
fn display_names(demangler: Option<&Path>, names: &[String]) -> Vec<String> {
    let demangled = demangler.and_then(|d| {
        let out = Command::new(d).args(names).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        (out.status.success() && lines.len() == names.len()).then_some(lines)
    });
    match demangled {
        Some(d) => names
            .iter()
            .zip(d)
            .map(|(m, d)| if *m == d { d } else { format!("{d}  [{m}]") })
            .collect(),
        None => names.to_vec(),
    }
}

fn mismatch_message(a: &CheckArgs, report: &KernelReport) -> String {
    let mut msg = format!(
        "{}: {}: the host code registers {} kernel(s), and the device code of {} target(s) lacks some of them; \
         those launches would fail with hipErrorInvalidDeviceFunction on such GPUs.",
        a.library,
        a.source,
        report.host.len(),
        report.missing.len()
    );
    for (target, kernels) in &report.missing {
        let _ = write!(msg, "\n  {target}: missing");
        for k in display_names(a.demangler.as_deref(), kernels) {
            let _ = write!(msg, "\n    {k}");
        }
    }
    let _ = write!(
        msg,
        "\nLikely cause: the device compile saw other code than the host compile: a define, include or header \
         seen by one side only (device_copts or a per-target select() with -D, an #if on __HIP_DEVICE_COMPILE__ \
         or __gfx*__ around a __global__ function). Compare the two command lines:\n  \
         bazel aquery 'mnemonic(\"HipHostCompile|HipDeviceCompile\", {})'",
        a.library
    );
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_library_source_target_and_kernels() {
        let a: CheckArgs = super::super::parse_args(
            "check",
            &[
                "--host",
                "h.o",
                "--device",
                "gfx1201=k.co",
                "--source",
                "pkg/k.hip",
                "--library",
                "//pkg:k",
                "--output",
                "o",
            ],
        )
        .unwrap();
        let mut report = KernelReport::default();
        report.host.insert("_Z4sortPfi".into());
        report
            .missing
            .insert("gfx1201".into(), vec!["_Z4sortPfi".into()]);
        let m = mismatch_message(&a, &report);
        for needle in [
            "//pkg:k: pkg/k.hip",
            "gfx1201: missing",
            "_Z4sortPfi",
            "Likely cause",
        ] {
            assert!(m.contains(needle), "{needle} not in {m}");
        }
    }
}
