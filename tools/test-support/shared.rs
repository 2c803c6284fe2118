//! Test helpers shared by several crates' tests (included with `#[path]`,
//! as test crates cannot depend on each other's `tests/` modules).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tool of LLVM 21 where Debian installs it (clang-21, lld-21, llvm-21):
/// the compiler of the build root; panics with how to get it if missing.
pub fn llvm(name: &str) -> PathBuf {
    let p = Path::new("/usr/lib/llvm-21/bin").join(name);
    assert!(
        p.exists(),
        "{} not found: run the tests inside the build root, which has it: \
         scripts/buildroot cargo test --manifest-path tools/Cargo.toml --locked --workspace",
        p.display()
    );
    p
}

/// A command for an LLVM 21 tool, without the environment variables that
/// change what clang and clang-offload-bundler write (compression), so the
/// caller's command line alone decides.
pub fn llvm_cmd(name: &str) -> Command {
    let mut c = Command::new(llvm(name));
    for v in [
        "OFFLOAD_BUNDLER_COMPRESS",
        "OFFLOAD_BUNDLER_COMPRESSION_LEVEL",
        "OFFLOAD_BUNDLER_VERBOSE",
        "OFFLOAD_BUNDLER_IGNORE_ENV_VAR",
        "COMPRESSED_BUNDLE_FORMAT_VERSION",
    ] {
        c.env_remove(v);
    }
    c
}

/// The fuzz crate under `crate_dir` has its own lock file (it is not a
/// workspace member): it must list the crate's dependencies as they are, or
/// `cargo fuzz` with `--locked` stops.
pub fn assert_fuzz_lock_file_current(crate_dir: &Path) {
    let manifest = crate_dir.join("fuzz/Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} is out of date; run `cargo update --workspace --offline --manifest-path {}`:\n{}",
        manifest.with_file_name("Cargo.lock").display(),
        manifest.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
