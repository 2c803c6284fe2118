//! Shared helpers for the integration tests: building small ELF files with
//! gcc (and AMDGPU ones with the build root's LLVM) and packing them into wheels.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use wheel_format::Digest;

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

/// Compile C source into a shared object with gcc. `-nostdlib` keeps the
/// host's glibc out of the result, so its version requirements are exactly
/// the ones the test creates.
pub fn build_so(dir: &Path, out: &str, src: &str, extra: &[&str]) -> PathBuf {
    let c = dir.join(format!("{out}.c"));
    std::fs::write(&c, src).unwrap();
    let o = dir.join(out);
    let status = Command::new("gcc")
        .args(["-shared", "-fPIC", "-nostdlib", "-o"])
        .arg(&o)
        .arg(&c)
        .args(extra)
        .status()
        .expect("gcc must be installed");
    assert!(status.success(), "gcc failed for {out}");
    o
}

/// A stub library with the given soname; `version_script` (if any) defines
/// its symbol versions.
pub fn stub_lib(dir: &Path, soname: &str, src: &str, version_script: Option<&str>) -> PathBuf {
    let mut args = vec![format!("-Wl,-soname,{soname}")];
    if let Some(script) = version_script {
        let v = dir.join(format!("{soname}.map"));
        std::fs::write(&v, script).unwrap();
        args.push(format!("-Wl,--version-script={}", v.display()));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    build_so(dir, soname, src, &refs)
}

/// Pack members into a wheel named `file_name` under `dir`. The `WHEEL`
/// file is written from `root_is_purelib` and the file name's tags.
pub fn make_wheel(
    dir: &Path,
    file_name: &str,
    root_is_purelib: bool,
    members: &[(&str, Vec<u8>)],
) -> PathBuf {
    let stem = file_name.strip_suffix(".whl").unwrap();
    let parts: Vec<&str> = stem.split('-').collect();
    let (name, version) = (parts[0], parts[1]);
    let n = parts.len();
    let (py, abi, plat) = (parts[n - 3], parts[n - 2], parts[n - 1]);
    let wheel_meta = format!(
        "Wheel-Version: 1.0\nGenerator: manylinux-check-tests\nRoot-Is-Purelib: {root_is_purelib}\nTag: {py}-{abi}-{plat}\n"
    );
    let path = dir.join(file_name);
    let f = std::fs::File::create(&path).unwrap();
    let mut zip = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default();
    for (member, bytes) in members {
        zip.start_file(*member, opts).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let dist_info = format!("{name}-{version}.dist-info");
    zip.start_file(format!("{dist_info}/WHEEL"), opts).unwrap();
    zip.write_all(wheel_meta.as_bytes()).unwrap();
    zip.start_file(format!("{dist_info}/METADATA"), opts)
        .unwrap();
    let metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    zip.write_all(metadata.as_bytes()).unwrap();
    let row = |member: &str, bytes: &[u8]| {
        let mut d = Digest::default();
        d.update(bytes);
        format!("{member},{},{}\n", d.record_hash(), d.len())
    };
    let mut record: String = members.iter().map(|(m, b)| row(m, b)).collect();
    record.push_str(&row(&format!("{dist_info}/WHEEL"), wheel_meta.as_bytes()));
    record.push_str(&row(&format!("{dist_info}/METADATA"), metadata.as_bytes()));
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    zip.start_file(format!("{dist_info}/RECORD"), opts).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}
