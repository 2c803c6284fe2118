//! The fuzz bodies, run by the fuzz crate (`fuzz/`, cargo-fuzz) and over
//! its committed corpus by `tests/fuzz_corpus.rs`: whatever the bytes, the
//! readers return an error or a value that keeps their promises, never
//! panic, and never allocate past their documented bounds.

use std::io::Write;

use anyhow::{ensure, Result};

use crate::{host_refs, markers_in_section, toc_of, Toc};

/// An archive read from memory; what it returns is consistent.
pub fn fuzz_archive(data: &[u8]) -> Result<Toc> {
    let toc = toc_of(data, "input")?;
    for (key, arches) in &toc.binaries {
        ensure!(!arches.is_empty(), "{key}: kept without kernels");
        for (arch, _) in arches {
            ensure!(toc.gfx_arches.contains(arch), "{key}: {arch} not listed");
        }
    }
    Ok(toc)
}

/// A `.rocm_kpack_ref` section: every marker has a search path, none twice.
pub fn fuzz_marker(data: &[u8]) -> Result<usize> {
    let markers = markers_in_section(data)?;
    for m in &markers {
        let distinct: std::collections::HashSet<&String> = m.search_paths.iter().collect();
        ensure!(
            !m.search_paths.is_empty() && distinct.len() == m.search_paths.len(),
            "search paths {:?}",
            m.search_paths
        );
    }
    Ok(markers.len())
}

/// An ELF host binary in memory: its wrappers.
pub fn fuzz_host(data: &[u8]) -> Result<usize> {
    Ok(host_refs(data)?.len())
}

/// A device wheel (the bytes as a `.whl` file): read as `check` reads one.
pub fn fuzz_device_wheel(data: &[u8]) -> Result<usize> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("demo_device_gfx1201-1.0-py3-none-any.whl");
    std::fs::File::create(&path)?.write_all(data)?;
    let w = crate::wheel::read(&path)?;
    Ok(w.archives.len() + w.binaries.len())
}
