//! End-to-end tests of the `rocm-wheel` binary: the command-line contract as
//! users and the Bazel rules see it (argv in; exit code, stdout, stderr and
//! files out): argument parsing, exit codes, error messages, nothing left
//! behind on error, the binary's peak memory, and one run per subcommand
//! proving the wiring. What a subcommand computes is tested in the `tests/`
//! of the library crate it calls (wheel-thin, wheel-repair, wheel-read,
//! wheel-inspect, elf-edit, ...); the inputs are made by test-support.
//! Only running the binary is defined here.
//!
//! One test binary with one module per subcommand, so the workspace links
//! one extra executable, not five.

mod build;
mod bundle;
mod hardening;
mod help;
mod index;
mod kpack;
mod kpack_hostile;
mod repair;
mod rpath;
mod thin;
mod variant;
mod wheel_readers;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

/// The binary under test, built by cargo for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_rocm-wheel");

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Out {
    pub argv: Vec<String>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Asserts exit 0 and returns self for further checks.
    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(
            self.code,
            Some(0),
            "`rocm-wheel {}` failed:\nstdout: {}\nstderr: {}",
            self.argv.join(" "),
            self.stdout,
            self.stderr
        );
        self.no_panic();
        self
    }

    /// Asserts the documented failure: exit `code`, an error on stderr that
    /// contains `needle`, nothing on stdout, no panic.
    #[track_caller]
    pub fn fails(self, code: i32, needle: &str) -> Self {
        assert_eq!(
            self.code,
            Some(code),
            "`rocm-wheel {}`: expected exit {code}\nstdout: {}\nstderr: {}",
            self.argv.join(" "),
            self.stdout,
            self.stderr
        );
        assert!(
            self.stderr.contains(needle),
            "`rocm-wheel {}`: stderr does not mention {needle:?}:\n{}",
            self.argv.join(" "),
            self.stderr
        );
        assert!(
            self.stdout.is_empty(),
            "`rocm-wheel {}`: failed but printed to stdout:\n{}",
            self.argv.join(" "),
            self.stdout
        );
        self.no_panic();
        self
    }

    #[track_caller]
    fn no_panic(&self) {
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "`rocm-wheel {}` panicked:\n{}",
            self.argv.join(" "),
            self.stderr
        );
    }
}

/// Runs the binary in `cwd`, without SOURCE_DATE_EPOCH from the caller's
/// environment.
pub fn rw<S: AsRef<OsStr>>(cwd: &Path, args: &[S]) -> Out {
    run_cmd(
        Command::new(BIN)
            .args(args)
            .current_dir(cwd)
            .env_remove("SOURCE_DATE_EPOCH"),
    )
}

/// Runs a prepared command of the binary and collects its output.
pub fn run_cmd(cmd: &mut Command) -> Out {
    let argv = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    Out {
        argv,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `argv` so that directory permissions apply even to root: root
/// normally writes into a mode 0555 directory, so the run drops
/// CAP_DAC_OVERRIDE (util-linux `setpriv`) when that is the case here.
pub fn run_without_dac_override(dir: &Path, ro: &Path, argv: &[&str]) -> Out {
    let probe = ro.join(".probe");
    let privileged = std::fs::write(&probe, b"").is_ok();
    if !privileged {
        return rw(dir, argv);
    }
    std::fs::remove_file(&probe).unwrap();
    let setpriv = Path::new("/usr/bin/setpriv");
    assert!(
        setpriv.exists(),
        "running as root needs setpriv to drop CAP_DAC_OVERRIDE: install util-linux (run `make setup` first)"
    );
    run_cmd(
        Command::new(setpriv)
            .arg("--bounding-set=-dac_override,-dac_read_search")
            .arg("--")
            .arg(BIN)
            .args(argv)
            .current_dir(dir),
    )
}
