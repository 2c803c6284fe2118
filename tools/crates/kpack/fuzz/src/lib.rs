//! The fuzz bodies of the kpack readers, outside the library's build: the
//! fuzz targets (`fuzz_targets/`) call them, and `cargo test -p kpack` runs
//! them over the committed corpus (`tests/fuzz_corpus.rs` includes this file).
//!
//! Whatever the bytes, a reader either refuses them (an `Err`: ordinary,
//! ignored by the targets) or returns a value that keeps its promises. A
//! broken promise panics, which libFuzzer reports as a crash and keeps the
//! input. `KPACK_FUZZ_PLANT` plants a fault for the negative controls
//! (`run.sh --controls`): `promise` (every kept promise reported broken),
//! `timeout` (a body that never returns), `oom` (a body that holds 1 GiB).

use std::collections::HashSet;
use std::io::Write;
use std::sync::OnceLock;

use anyhow::Result;

/// A fault planted in every body, so the controls can show the harness
/// reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    None,
    BrokenPromise,
    Timeout,
    Oom,
}

impl Plant {
    /// `KPACK_FUZZ_PLANT`, read once; an unknown value panics at once rather
    /// than fuzz without the fault a control asked for.
    pub fn from_env() -> Plant {
        static PLANT: OnceLock<Plant> = OnceLock::new();
        *PLANT.get_or_init(|| match std::env::var("KPACK_FUZZ_PLANT").as_deref() {
            Err(_) | Ok("") => Plant::None,
            Ok("promise") => Plant::BrokenPromise,
            Ok("timeout") => Plant::Timeout,
            Ok("oom") => Plant::Oom,
            Ok(other) => panic!("KPACK_FUZZ_PLANT={other}: use promise, timeout or oom"),
        })
    }

    /// Runs the timeout and oom faults (before the body reads anything).
    fn act(self) {
        match self {
            Plant::Timeout => loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
            },
            Plant::Oom => {
                // Touched, so it counts against libFuzzer's RSS limit, and
                // held until libFuzzer's RSS thread notices.
                let held = vec![1u8; 1 << 30];
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    std::hint::black_box(&held);
                }
            }
            Plant::None | Plant::BrokenPromise => {}
        }
    }

    /// A promise check: panics when it is broken, or, planted, when it is kept.
    fn promise(self, kept: bool, what: impl FnOnce() -> String) {
        if kept == (self == Plant::BrokenPromise) {
            panic!("broken promise: {}", what());
        }
    }
}

/// An archive read from memory: every binary it lists has kernels, each for
/// a target the archive lists.
pub fn archive(data: &[u8], plant: Plant) -> Result<()> {
    plant.act();
    toc_promises(&kpack::toc_of(data, "input")?, plant);
    Ok(())
}

fn toc_promises(toc: &kpack::Toc, plant: Plant) {
    for (key, arches) in &toc.binaries {
        plant.promise(!arches.is_empty(), || {
            format!("{key}: kept without kernels")
        });
        for (arch, _) in arches {
            plant.promise(toc.gfx_arches.contains(arch), || {
                format!("{key}: {arch} not listed")
            });
        }
    }
}

/// A `.rocm_kpack_ref` section: every marker has a search path, none twice.
pub fn marker(data: &[u8], plant: Plant) -> Result<()> {
    plant.act();
    let markers = kpack::markers_in_section(data)?;
    for m in &markers {
        let distinct: HashSet<&String> = m.search_paths.iter().collect();
        plant.promise(
            !m.search_paths.is_empty() && distinct.len() == m.search_paths.len(),
            || format!("search paths {:?}", m.search_paths),
        );
    }
    Ok(())
}

/// An ELF host binary in memory: its wrappers, in segment order, each with a
/// marker that keeps the marker's promises.
pub fn host(data: &[u8], plant: Plant) -> Result<()> {
    plant.act();
    let refs = kpack::host_refs(data)?;
    for pair in refs.windows(2) {
        plant.promise(pair[0].index < pair[1].index, || {
            format!(
                "wrappers {} and {} out of order",
                pair[0].index, pair[1].index
            )
        });
    }
    for r in &refs {
        plant.promise(!r.marker.search_paths.is_empty(), || {
            format!("wrapper {}: marker without a search path", r.index)
        });
    }
    Ok(())
}

/// A device wheel (the bytes as a `.whl` file), read as `check` reads one:
/// the identity its file name gives, archives that keep their promises.
pub fn device_wheel(data: &[u8], plant: Plant) -> Result<()> {
    plant.act();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("demo_device_gfx1201-1.0-py3-none-any.whl");
    std::fs::File::create(&path)?.write_all(data)?;
    let w = kpack::wheel::read(&path)?;
    plant.promise(
        w.key() == "demo-device-gfx1201" && w.version == "1.0",
        || format!("read as {} {}", w.name, w.version),
    );
    for toc in w.archives.values() {
        toc_promises(toc, plant);
    }
    Ok(())
}
