//! GPU code made with the build root's LLVM: AMDGPU code objects, offload
//! bundles written by the reference clang-offload-bundler, and HIP host
//! objects and shared objects embedding a bundle in `.hip_fatbin`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::{llvm_cmd, produce, run, run_stdout, test_cache, HOW_TO_GET};

/// The host triple of the bundles made here.
pub const HOST: &str = "x86_64-unknown-linux-gnu";

/// HIP source with one kernel and its host-side launcher (kept tiny:
/// compile time matters).
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

/// A second kernel, for files holding two different ones.
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

/// A plain AMDGPU code object of [`KERNEL`] for `arch`. Kept in the test
/// cache (keyed by arch and the kernel's source, so an edited kernel is
/// compiled anew), so a rerun does not recompile; written atomically
/// because tests run in parallel.
pub fn code_object(arch: &str) -> PathBuf {
    use sha2::Digest;
    let cache = test_cache("hip-code-objects");
    let key: String = sha2::Sha256::digest(KERNEL.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let out = cache.join(format!("add1.{key}.{arch}.co"));
    if out.exists() {
        return out;
    }
    let work = tempfile::tempdir_in(&cache).unwrap();
    let src = work.path().join("k.hip");
    std::fs::write(&src, KERNEL).unwrap();
    hip_code_object(&src, arch, &out);
    out
}

/// Work directory with code objects built once per test process.
pub struct Fixtures {
    pub dir: tempfile::TempDir,
}

impl Fixtures {
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Plain code object of [`KERNEL`] (HIP, with the device libraries) for
    /// a gfx target: [`code_object`].
    pub fn code_object(&self, arch: &str) -> PathBuf {
        code_object(arch)
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

/// The shared fixture directory (locked: tests run on several threads),
/// with [`KERNEL`] as `k.hip`, [`KERNEL2`] as `k2.hip` and [`BARE_KERNEL`]
/// as `b.hip`.
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

/// Links host objects into a shared object against the HIP runtime, its
/// search path where a ROCm wheel layout puts it.
pub fn link_shared(objs: &[&Path], out: &Path, extra: &[&str]) {
    run(llvm_cmd("clang++")
        .arg("-shared")
        .args(objs)
        .args(["-lamdhip64", "-Wl,-rpath,$ORIGIN/../rocm/lib"])
        .args(extra)
        .arg("-o")
        .arg(out));
}

/// `dir/out`: a shared object whose host code ([`KERNEL`]) embeds the
/// bundle `dir/hipfb` in `.hip_fatbin`, as the hip_library rule builds it;
/// not linked to the HIP runtime, which tests never load.
pub fn hip_so(dir: &Path, hipfb: &str, out: &str) {
    std::fs::write(dir.join("k.hip"), KERNEL).unwrap();
    host_object(&dir.join("k.hip"), &dir.join(hipfb), &dir.join("k.host.o"));
    run_stdout(
        llvm_cmd("clang++")
            .current_dir(dir)
            .args(["-shared", "k.host.o", "-o", out]),
    );
}

/// `dir/out`: a kpack host library as hip_library and the wheel rules make
/// one: [`hip_so`]'s host object with `.hip_fatbin` replaced by the kpack
/// marker `dir/marker` (renamed `.rocm_kpack_ref`) and the fat binary
/// wrapper by the `HIPK` one in `dir/wrapper`, linked with the search path
/// `runpath` (DT_RUNPATH).
pub fn kpack_host_so(dir: &Path, marker: &str, wrapper: &str, runpath: &str, out: &str) {
    std::fs::write(dir.join("placeholder.hipfb"), b"replaced\n").unwrap();
    hip_so(dir, "placeholder.hipfb", "unused.so");
    run_stdout(llvm_cmd("llvm-objcopy").current_dir(dir).args([
        "--update-section",
        &format!(".hip_fatbin={marker}"),
        "--update-section",
        &format!(".hipFatBinSegment={wrapper}"),
        "--set-section-alignment",
        ".hip_fatbin=1",
        "--rename-section",
        ".hip_fatbin=.rocm_kpack_ref",
        "k.host.o",
        "k.pic.o",
    ]));
    run_stdout(
        llvm_cmd("clang++")
            .current_dir(dir)
            .args(["-shared", "-Wl,--enable-new-dtags", "k.pic.o", "-o", out])
            .arg(format!("-Wl,-rpath,{runpath}")),
    );
}

/// The bundle entry id of a HIP code object for `arch`.
pub fn device_id(arch: &str) -> String {
    format!("hipv4-amdgcn-amd-amdhsa--{arch}")
}

/// The processor a bundle entry id names (`gfx12-generic` whole): the
/// inverse of [`device_id`].
pub fn gfx_of(id: &str) -> &str {
    id.split_once("--").unwrap().1
}

/// The ELF header of a gfx90a code object, padded with zeros to `len`:
/// big inputs without a compiler.
pub fn padded_code_object(len: usize) -> Vec<u8> {
    let mut e = vec![0u8; len];
    e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
    e[8] = 3; // code object v5
    e[16] = 3; // ET_DYN
    e[18..20].copy_from_slice(&224u16.to_le_bytes()); // EM_AMDGPU
    e[48..52].copy_from_slice(&(0x3fu32 | 0x100).to_le_bytes()); // gfx90a, xnack any
    e[52] = 64;
    e
}

/// A binutils tool (readelf, objcopy) from /usr/bin.
pub fn binutils(name: &str) -> PathBuf {
    let p = Path::new("/usr/bin").join(name);
    assert!(p.exists(), "{} not found: {HOW_TO_GET}", p.display());
    p
}
