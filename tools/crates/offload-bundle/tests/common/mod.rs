//! Shared by the integration tests of offload-bundle and wheel-inspect: find
//! the real tools (the build root's clang, clang-offload-bundler and lld, binutils,
//! the project venv) and build GPU code with them. A missing tool fails the
//! test with how to get it; nothing is skipped.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

pub const HOST: &str = "x86_64-unknown-linux-gnu";

/// The project venv's Python.
pub fn python() -> PathBuf {
    venv_bin("python")
}

/// A binutils tool (readelf, objcopy).
pub fn tool(name: &str) -> PathBuf {
    let p = Path::new("/usr/bin").join(name);
    assert!(p.exists(), "{} not found: {HOW_TO_GET}", p.display());
    p
}

pub const KERNEL: &str = r#"#include <hip/hip_runtime.h>
__global__ void add1(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" int launch_add1(float *x, int n) {
  hipLaunchKernelGGL(add1, dim3((n + 255) / 256), dim3(256), 0, 0, x, n);
  return 0;
}
"#;

pub const KERNEL2: &str = r#"#include <hip/hip_runtime.h>
__global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
extern "C" int launch_scale(float *x, float s, int n) {
  hipLaunchKernelGGL(scale, dim3((n + 255) / 256), dim3(256), 0, 0, x, s, n);
  return 0;
}
"#;

/// Self-contained device code for `clang -cc1` (no HIP headers, no device
/// libraries), so it compiles for every processor LLVM knows.
pub const BARE_KERNEL: &str = r#"#define __global__ __attribute__((amdgpu_kernel, visibility("default")))
extern "C" __global__ void twice(float *x) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  x[i] = 2.0f * x[i];
}
"#;

/// Work directory with code objects built once per test process.
pub struct Fixtures {
    pub dir: tempfile::TempDir,
}

impl Fixtures {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Plain code object of `k.hip` (HIP, with the device libraries) for a
    /// gfx target, from the build root's HIP driver.
    pub fn code_object(&self, arch: &str) -> PathBuf {
        let out = self.path(&format!("k.{arch}.co"));
        if !out.exists() {
            hip_code_object(&self.path("k.hip"), arch, &out);
        }
        out
    }

    /// Code object of [`BARE_KERNEL`] for any processor the build root's LLVM knows:
    /// `clang -cc1 -emit-obj` (the unlinked object is left at `b.<arch>.o`),
    /// then `ld.lld -shared`.
    pub fn bare_code_object(&self, arch: &str) -> PathBuf {
        let out = self.path(&format!("b.{arch}.co"));
        if !out.exists() {
            let obj = self.path(&format!("b.{arch}.o"));
            run(llvm_cmd("clang")
                .args(["-cc1", "-triple", "amdgcn-amd-amdhsa", "-target-cpu", arch])
                .args(["-x", "hip", "-fcuda-is-device", "-O2", "-emit-obj"])
                .arg(self.path("b.hip"))
                .arg("-o")
                .arg(&obj));
            produce(&out, |tmp| {
                run(llvm_cmd("ld.lld")
                    .arg("-shared")
                    .arg(&obj)
                    .arg("-o")
                    .arg(tmp));
            });
        }
        out
    }
}

static FIXTURES: OnceLock<std::sync::Mutex<Fixtures>> = OnceLock::new();

/// The shared fixture directory (locked: tests run on several threads).
pub fn fixtures() -> std::sync::MutexGuard<'static, Fixtures> {
    FIXTURES
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("k.hip"), KERNEL).unwrap();
            std::fs::write(dir.path().join("k2.hip"), KERNEL2).unwrap();
            std::fs::write(dir.path().join("b.hip"), BARE_KERNEL).unwrap();
            std::sync::Mutex::new(Fixtures { dir })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Bundles code objects with the build root's clang-offload-bundler (the
/// reference writer), 4096-aligned as the HIP driver asks for.
pub fn clang_bundle(out: &Path, entries: &[(&str, &Path)]) {
    run(&mut bundler_cmd(out, entries));
}

/// The same, compressed (`-compress`, zstd) in CCOB format `version` (2 or
/// 3, chosen with COMPRESSED_BUNDLE_FORMAT_VERSION as clang 21 documents).
pub fn clang_bundle_compressed(out: &Path, entries: &[(&str, &Path)], version: u16) {
    run(bundler_cmd(out, entries)
        .arg("-compress")
        .env("COMPRESSED_BUNDLE_FORMAT_VERSION", version.to_string()));
}

fn bundler_cmd(out: &Path, entries: &[(&str, &Path)]) -> Command {
    let mut targets = vec![format!("host-{HOST}")];
    let mut inputs = vec!["-input=/dev/null".to_string()];
    for (id, p) in entries {
        targets.push(id.to_string());
        inputs.push(format!("-input={}", p.display()));
    }
    let mut c = llvm_cmd("clang-offload-bundler");
    c.args(["-type=o", "-bundle-align=4096"])
        .arg(format!("-targets={}", targets.join(",")))
        .args(&inputs)
        .arg(format!("-output={}", out.display()));
    c
}

/// Compiles the host side of a HIP source embedding `fatbin` and links it
/// into a shared object, as the project's rules do.
pub fn host_object(src: &Path, fatbin: &Path, out: &Path) {
    run(llvm_cmd("clang++")
        .args([
            "-x",
            "hip",
            "--cuda-host-only",
            "--offload-arch=gfx906",
            "-fPIC",
            "-O2",
        ])
        .arg("--rocm-path=/usr")
        .args(["-Xclang", "-fcuda-include-gpubinary", "-Xclang"])
        .arg(fatbin)
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(out));
}

pub fn link_shared(objs: &[&Path], out: &Path, extra: &[&str]) {
    run(llvm_cmd("clang++")
        .arg("-shared")
        .args(objs)
        .args(["-lamdhip64", "-Wl,-rpath,$ORIGIN/../rocm/lib"])
        .args(extra)
        .arg("-o")
        .arg(out));
}

pub fn device_id(arch: &str) -> String {
    format!("hipv4-amdgcn-amd-amdhsa--{arch}")
}
