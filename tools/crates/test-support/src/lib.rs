//! Helpers the tests of several crates share: where the project's tools
//! are (the venv, the build root's LLVM, the AMDGPU device libraries), running them, and
//! building small GPU code objects with them. A missing tool fails the test
//! with how to get it; nothing is skipped.
//!
//! Only ever a dev-dependency: nothing here is part of `rocm-wheel`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// How to get the tools these tests run.
pub const HOW_TO_GET: &str = "run the tests inside the build root, which has all of them: \
     scripts/buildroot cargo test --manifest-path tools/Cargo.toml --locked --workspace";

/// The directory of the package whose tests run: cargo's `CARGO_MANIFEST_DIR`
/// at run time. The compile-time `env!` value can be stale: cargo does not
/// rebuild a test when only the checkout's path changed (a target
/// directory shared by clones at other paths).
pub fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The repository root (every package is `tools/crates/<name>`).
pub fn repo_root() -> PathBuf {
    manifest_dir().ancestors().nth(3).unwrap().to_path_buf()
}

/// The project venv: `$ROCM_WHEEL_VENV`, else `<repo>/.venv` (made by
/// `make setup`). Not checked: see [`venv_bin`].
pub fn venv() -> PathBuf {
    std::env::var_os("ROCM_WHEEL_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv"))
}

/// `bin/<tool>` of the project venv; panics with the fix if it is missing.
pub fn venv_bin(tool: &str) -> PathBuf {
    let p = venv().join("bin").join(tool);
    assert!(
        p.exists(),
        "{} not found: run `make setup` first (or point ROCM_WHEEL_VENV at a venv that has it)",
        p.display()
    );
    p
}

/// A directory under `tools/target/test-cache` for downloads and other
/// slow-to-make inputs, so reruns are offline and fast.
pub fn test_cache(sub: &str) -> PathBuf {
    let d = repo_root().join("tools/target/test-cache").join(sub);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The newest `/usr/lib/llvm-<N>/bin` with a clang, where Debian installs
/// clang-<N>, lld-<N> and llvm-<N>: the compiler of the build root.
fn llvm_bin() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let newest = std::fs::read_dir("/usr/lib")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let major: u32 = name.strip_prefix("llvm-")?.parse().ok()?;
                let bin = e.path().join("bin");
                bin.join("clang").exists().then_some((major, bin))
            })
            .max_by_key(|(major, _)| *major);
        match newest {
            Some((_, bin)) => bin,
            None => panic!("no /usr/lib/llvm-<N>/bin/clang: {HOW_TO_GET}"),
        }
    })
}

/// A tool of the build root's LLVM (see `llvm_bin`); panics with how to get
/// it if missing.
pub fn llvm(name: &str) -> PathBuf {
    let p = llvm_bin().join(name);
    assert!(p.exists(), "{} not found: {HOW_TO_GET}", p.display());
    p
}

/// A command for an LLVM tool, without the environment variables that
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

/// Runs a command and returns its output whatever its exit status, panicking
/// only if it cannot start.
///
/// A program a test has just written can fail to start with ETXTBSY: a
/// parallel test thread that forks while the file is open for writing
/// carries the write descriptor into its child until that child execs. The
/// descriptor goes away within moments, so starting is retried briefly.
#[track_caller]
pub fn output(cmd: &mut Command) -> Output {
    let mut attempt = 0;
    loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(ETXTBSY) && attempt < 50 => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(20 * attempt));
            }
            r => return r.unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} ({HOW_TO_GET})")),
        }
    }
}

/// Runs a command, panicking with its output if it cannot start or fails.
#[track_caller]
pub fn run(cmd: &mut Command) -> Output {
    let out = output(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// errno of "Text file busy" on Linux.
const ETXTBSY: i32 = 26;

/// [`run`], returning stdout as text.
#[track_caller]
pub fn run_stdout(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&run(cmd).stdout).into_owned()
}

/// The AMDGPU device libraries (ocml.bc, ...) of that LLVM: Debian's
/// rocm-device-libs-<N> installs them into clang's resource directory.
pub fn bitcode() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(run_stdout(llvm_cmd("clang").arg("-print-resource-dir")).trim())
            .join("amdgcn/bitcode");
        assert!(
            dir.join("ocml.bc").exists(),
            "no AMDGPU device libraries in {} (Debian package rocm-device-libs-<N>): {HOW_TO_GET}",
            dir.display()
        );
        dir
    })
}

/// Compiles the HIP source `src` into a plain AMDGPU code object for `arch`
/// with the build root's HIP driver and the device libraries. `out` appears whole
/// or not at all, so tests running in parallel may share it as a cache.
pub fn hip_code_object(src: &Path, arch: &str, out: &Path) {
    produce(out, |tmp| {
        run(llvm_cmd("clang++")
            .args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
            .arg(format!("--offload-arch={arch}"))
            .arg("--rocm-path=/usr")
            .arg(format!("--rocm-device-lib-path={}", bitcode().display()))
            .args(["-O2", "-c"])
            .arg(src)
            .arg("-o")
            .arg(tmp));
    });
}

/// Makes `out` atomically: `make` writes a temporary file next to it (a
/// tool's `-o`), which replaces `out` only once `make` returns.
pub fn produce(out: &Path, make: impl FnOnce(&Path)) {
    let file = atomic_write::AtomicFile::create(out).unwrap();
    make(file.temp_path());
    file.commit(0o644).unwrap();
}

/// Copies `src` into `dir` under `name` and returns the copy's path.
pub fn copy_in(src: &Path, dir: &Path, name: &str) -> PathBuf {
    let dst = dir.join(name);
    std::fs::copy(src, &dst).unwrap_or_else(|e| panic!("cannot copy {}: {e}", src.display()));
    dst
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

/// rocm-kpack's sources (the kpack format's reference reader, writer and
/// runtime): `$ROCM_KPACK_SRC`, else `../shared/third_party/rocm-kpack-e348328`
/// as the build root binds it (/opt/rules_rocm_shared) or next to the
/// checkout. Panics with the fix if none is there.
pub fn rocm_kpack_src() -> PathBuf {
    const DIR: &str = "third_party/rocm-kpack-e348328";
    let candidates: Vec<PathBuf> = match std::env::var_os("ROCM_KPACK_SRC") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![
            Path::new("/opt/rules_rocm_shared").join(DIR),
            repo_root().join("../shared").join(DIR),
        ],
    };
    candidates
        .iter()
        .find(|p| p.join("python/rocm_kpack/kpack.py").is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "rocm-kpack's sources not found in {candidates:?}: point ROCM_KPACK_SRC at a checkout of ROCm/rocm-kpack e348328, or {HOW_TO_GET}"
            )
        })
}

/// `n` deterministic, semi-compressible bytes (text-like with noise): input
/// for the deflate tests of the zip writer and the wheel rewriter.
pub fn sample(n: usize) -> Vec<u8> {
    let mut x: u32 = 12345;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            if (x >> 16) & 3 == 0 {
                (x >> 8) as u8
            } else {
                b"the quick brown fox jumps over the lazy dog\n"[i % 44]
            }
        })
        .collect()
}
