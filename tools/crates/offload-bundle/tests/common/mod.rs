//! Shared by the integration tests of offload-bundle and wheel-inspect: find
//! the real tools of this machine and build GPU code with them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const BITCODE: &str = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
pub const HOST: &str = "x86_64-unknown-linux-gnu";

pub fn repo_root() -> PathBuf {
    // tools/crates/<crate> -> repo root
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(3)
        .unwrap()
        .to_path_buf()
}

pub fn venv() -> PathBuf {
    let v = std::env::var_os("ROCM_WHEEL_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv"));
    assert!(
        v.join("bin/python").exists(),
        "no Python venv at {} (set ROCM_WHEEL_VENV or run `make setup` first)",
        v.display()
    );
    v
}

pub fn python() -> PathBuf {
    venv().join("bin/python")
}

pub fn zig() -> PathBuf {
    let lib = venv().join("lib");
    for e in std::fs::read_dir(&lib).expect("venv lib dir").flatten() {
        let z = e.path().join("site-packages/ziglang/zig");
        if z.exists() {
            return z;
        }
    }
    panic!(
        "ziglang is not installed in {} (run `make setup` first)",
        venv().display()
    );
}

/// A tool from the Debian packages installed by `make setup`.
pub fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/lib/llvm-15/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found (run `make setup` first)");
}

/// Runs a command, panicking with its output if it fails.
pub fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
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

/// Self-contained device code for zig's clang (no HIP headers).
pub const ZIG_KERNEL: &str = r#"#define __global__ __attribute__((amdgpu_kernel, visibility("default")))
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

    /// Plain code object of `k.hip` for a gfx target (clang-15).
    pub fn code_object(&self, arch: &str) -> PathBuf {
        let out = self.path(&format!("k.{arch}.co"));
        if !out.exists() {
            let tmp = self.path(&format!("k.{arch}.co.tmp{}", std::process::id()));
            run(Command::new(tool("clang++-15"))
                .args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
                .arg(format!("--offload-arch={arch}"))
                .args([
                    "--rocm-path=/usr",
                    &format!("--rocm-device-lib-path={BITCODE}"),
                ])
                .args(["-O2", "-c"])
                .arg(self.path("k.hip"))
                .arg("-o")
                .arg(&tmp));
            std::fs::rename(&tmp, &out).unwrap();
        }
        out
    }

    /// Code object for a modern target from zig's clang 22 + lld.
    pub fn zig_code_object(&self, arch: &str) -> PathBuf {
        let out = self.path(&format!("z.{arch}.co"));
        if !out.exists() {
            let obj = self.path(&format!("z.{arch}.o"));
            run(Command::new(zig())
                .args([
                    "clang",
                    "-cc1",
                    "-triple",
                    "amdgcn-amd-amdhsa",
                    "-target-cpu",
                    arch,
                ])
                .args(["-x", "hip", "-fcuda-is-device", "-O2", "-emit-obj"])
                .arg(self.path("z.hip"))
                .arg("-o")
                .arg(&obj));
            let tmp = self.path(&format!("z.{arch}.co.tmp"));
            run(Command::new(zig())
                .args(["ld.lld", "-shared"])
                .arg(&obj)
                .arg("-o")
                .arg(&tmp));
            std::fs::rename(&tmp, &out).unwrap();
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
            std::fs::write(dir.path().join("z.hip"), ZIG_KERNEL).unwrap();
            std::sync::Mutex::new(Fixtures { dir })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Bundles code objects with clang-offload-bundler-15 (the reference writer).
pub fn clang_bundle(out: &Path, entries: &[(&str, &Path)]) {
    let mut targets = vec![format!("host-{HOST}")];
    let mut inputs = vec!["-input=/dev/null".to_string()];
    for (id, p) in entries {
        targets.push(id.to_string());
        inputs.push(format!("-input={}", p.display()));
    }
    run(Command::new(tool("clang-offload-bundler-15"))
        .args(["-type=o", "-bundle-align=4096"])
        .arg(format!("-targets={}", targets.join(",")))
        .args(&inputs)
        .arg(format!("-output={}", out.display())));
}

/// Compiles the host side of a HIP source embedding `fatbin` and links it
/// into a shared object, as the project's rules do.
pub fn host_object(src: &Path, fatbin: &Path, out: &Path) {
    run(Command::new(tool("clang++-15"))
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
    run(Command::new(tool("clang++-15"))
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
