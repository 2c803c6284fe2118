//! End-to-end tests of the `rocm-wheel` binary: the command-line contract as
//! users and the Bazel rules see it (argv in; exit code, stdout, stderr and
//! files out). The library crates test their own logic; these tests run the
//! real binary on real files made by the machine's compilers and check the
//! results with external tools (readelf, clang-offload-bundler, `wheel
//! unpack`) where one exists.
//!
//! One test binary with one module per subcommand, so the workspace links
//! one extra executable, not five.

mod build;
mod bundle;
mod hardening;
mod help;
mod kpack;
mod repair;
mod rpath;
mod thin;
mod wheel_readers;

use std::collections::BTreeMap;
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

/// Every file under `dir` (dot files included) with its contents: a failed
/// command must leave this unchanged — input untouched, no output, no
/// leftover temporary file.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts `dir` holds exactly what `before` recorded.
#[track_caller]
pub fn assert_unchanged(dir: &Path, before: &BTreeMap<PathBuf, Vec<u8>>) {
    let after = snapshot(dir);
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&after),
        names(before),
        "files in {} changed (output or temporary file left behind?)",
        dir.display()
    );
    for (p, data) in before {
        assert!(after[p] == *data, "{} was modified", p.display());
    }
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("rocm-wheel-cli-")
        .tempdir()
        .unwrap()
}

/// A small x86-64 shared library, compiled with gcc into `dir`.
pub fn host_so(dir: &Path, name: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, "int answer(void) { return 42; }\n").unwrap();
    let out = dir.join(name);
    run_stdout(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&out)
            .arg(&src),
    );
    std::fs::remove_file(src).unwrap();
    out
}

/// Device code for the HIP code objects (kept tiny: compile time matters).
const KERNEL: &str = r#"#include <hip/hip_runtime.h>
__global__ void add1(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"#;

/// A plain AMDGPU code object for `arch`, compiled by the build root's clang++.
/// Kept under cargo's per-target scratch directory (keyed by arch), so a
/// rerun does not recompile; written atomically because tests run in
/// parallel.
pub fn code_object(arch: &str) -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocm-wheel-cli");
    std::fs::create_dir_all(&cache).unwrap();
    let out = cache.join(format!("add1.{arch}.co"));
    if out.exists() {
        return out;
    }
    let work = tempfile::tempdir_in(&cache).unwrap();
    let src = work.path().join("k.hip");
    std::fs::write(&src, KERNEL).unwrap();
    hip_code_object(&src, arch, &out);
    out
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
