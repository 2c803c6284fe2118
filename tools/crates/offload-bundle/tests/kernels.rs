//! The host/device kernel check on objects the build root's HIP driver compiles.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use offload_bundle::kernels::{check_kernels, device_kernels, host_kernels};
use test_support::{bitcode, llvm_cmd, run, test_cache};

fn source() -> PathBuf {
    test_support::manifest_dir().join("tests/kernels_src/kinds.hip")
}

fn compile(half: &str, extra: &[&str], out: &Path) -> Vec<u8> {
    run(llvm_cmd("clang++")
        .args([
            "-x",
            "hip",
            half,
            "--offload-arch=gfx1200",
            "--no-gpu-bundle-output",
        ])
        .arg("--rocm-path=/usr")
        .arg(format!("--rocm-device-lib-path={}", bitcode().display()))
        .args(extra)
        .args(["-O2", "-c"])
        .arg(source())
        .arg("-o")
        .arg(out));
    std::fs::read(out).unwrap()
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn host_and_device_kernel_names_match() {
    let dir = test_cache("kernels");
    let host = compile("--cuda-host-only", &[], &dir.join("host.o"));
    let device = compile("--cuda-device-only", &[], &dir.join("all.co"));
    let lossy = compile(
        "--cuda-device-only",
        &["-DNO_KERNELS"],
        &dir.join("lossy.co"),
    );
    let want = names(&[
        "_ZN2a21kEPf",
        "_Z2tkIdEvPT_",
        "ck",
        "_ZL2skPi",
        "_Z14only_host_sidePi",
    ]);
    assert_eq!(host_kernels(&host).unwrap(), want);
    assert_eq!(device_kernels(&device).unwrap(), want);

    let report = check_kernels(
        &host,
        &[("gfx1200".into(), device), ("gfx1201".into(), lossy)],
    )
    .unwrap();
    assert_eq!(report.host, want);
    assert_eq!(
        report.missing.into_iter().collect::<Vec<_>>(),
        vec![(
            "gfx1201".to_string(),
            vec!["_Z14only_host_sidePi".to_string()]
        )]
    );
}

#[test]
fn a_code_object_that_is_not_elf_is_an_error() {
    let err = device_kernels(b"not an ELF file").unwrap_err();
    assert!(
        format!("{err:#}").contains("not a valid ELF file"),
        "{err:#}"
    );
}
