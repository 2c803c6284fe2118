//! manylinux-check's own helpers; building ELF files and wheels is
//! test-support's.
#![allow(dead_code)]

use std::path::Path;

use manylinux_check::{Report, Severity};

#[allow(unused_imports)] // each test binary uses its own subset
pub use test_support::*;

/// A report's errors and warnings, one line each, for comparing with a
/// list (notes left out).
pub fn errors_and_warnings(r: &Report) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
        .map(|f| format!("{:?} {} {:?}: {}", f.severity, f.code, f.file, f.message))
        .collect()
}

pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}
