//! Thinning a `.hip_fatbin` section in place: every bundle keeps the host
//! entry and the code objects of the requested GPU processors, in its own
//! format (uncompressed, or `CCOB` of the same version and method). Each
//! bundle stays at its offset — the host code's fat-binary wrappers point at
//! it — and the bytes it no longer needs become zeros, so nothing outside
//! the bundles moves.

use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};

use crate::partial::read_entries;
use crate::read::{Bundle, BundleIter, Entry, Limits};
use crate::write::{compress, layout_uncompressed};

/// Which processors' code objects stay (shared by the threads that thin).
pub type Keep<'a> = dyn Fn(&str) -> bool + Sync + 'a;

/// What thinning did to one bundle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ThinnedBundle {
    pub index: usize,
    /// Offset of the bundle in the section.
    pub offset: u64,
    /// Bytes the bundle occupied before and occupies now (the rest of its
    /// old extent is zeros).
    pub old_size: u64,
    pub new_size: u64,
    /// Target ids kept and dropped, in bundle order.
    pub kept: Vec<String>,
    pub dropped: Vec<String>,
}

/// The device target ids of each bundle of `section` (headers only: no
/// payload is decoded).
pub fn section_targets(section: &[u8], limits: &Limits) -> Result<Vec<Vec<String>>> {
    BundleIter::new(section, limits)
        .headers_only()
        .map(|b| {
            b.map(|b| {
                b.device_entries()
                    .map(|e| e.parsed_id().target_id.to_string())
                    .collect()
            })
        })
        .collect()
}

/// Rewrites every bundle of `section` to keep only device entries whose
/// processor `keep` accepts. Bundles are thinned on all cores, each
/// decoding only as far as its kept entries reach, and written back only
/// when all of them succeeded: any error (a bundle that would lose all its
/// code objects, a corrupt payload) leaves `section` as it was.
pub fn thin_section(
    section: &mut [u8],
    keep: &Keep<'_>,
    limits: &Limits,
) -> Result<Vec<ThinnedBundle>> {
    let heads: Vec<_> = BundleIter::new(section, limits)
        .headers_only()
        .collect::<Result<_>>()?;
    let mut plan = plan(&heads, keep)?;
    let todo: Vec<usize> = (0..plan.len())
        .filter(|&i| !plan[i].dropped.is_empty())
        .collect();
    let shared: &[u8] = section;
    let thinned = parallel_map(&todo, |&i| {
        let (start, end) = (
            plan[i].offset as usize,
            (plan[i].offset + plan[i].old_size) as usize,
        );
        thinned_bundle(&heads[i], &shared[start..end], keep)
            .with_context(|| format!("bundle #{i} at offset {start}"))
    });
    let thinned: Vec<Vec<u8>> = thinned.into_iter().collect::<Result<_>>()?;
    for (&i, bytes) in todo.iter().zip(&thinned) {
        let t = &plan[i];
        if bytes.len() as u64 > t.old_size {
            bail!(
                "bundle #{} at offset {}: the thinned bundle ({} bytes) is larger than the \
                 original ({} bytes) and cannot stay in place; this wheel cannot be thinned \
                 to these targets",
                t.index,
                t.offset,
                bytes.len(),
                t.old_size
            );
        }
    }
    for (&i, bytes) in todo.iter().zip(thinned) {
        let t = &mut plan[i];
        let (start, end) = (t.offset as usize, (t.offset + t.old_size) as usize);
        section[start..start + bytes.len()].copy_from_slice(&bytes);
        section[start + bytes.len()..end].fill(0);
        t.new_size = bytes.len() as u64;
    }
    Ok(plan)
}

/// What to keep and drop of each bundle (from their entry lists); refuses
/// to empty a bundle of its code objects.
fn plan(heads: &[Bundle], keep: &Keep<'_>) -> Result<Vec<ThinnedBundle>> {
    let mut plan = Vec::with_capacity(heads.len());
    for (index, b) in heads.iter().enumerate() {
        let (mut kept, mut dropped) = (Vec::new(), Vec::new());
        for e in b.device_entries() {
            let id = e.parsed_id();
            if keep(id.processor()) {
                kept.push(id.target_id.to_string());
            } else {
                dropped.push(id.target_id.to_string());
            }
        }
        if kept.is_empty() && !dropped.is_empty() {
            bail!(
                "bundle #{index} (offset {}) holds code only for {}; keeping none of them would \
                 leave it without a code object and its kernels could not load on any GPU. \
                 Add one of its targets to --gfx",
                b.start,
                dropped
                    .iter()
                    .map(|t| gfx_targets::describe_target(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        plan.push(ThinnedBundle {
            index,
            offset: b.start,
            old_size: b.len,
            new_size: b.len,
            kept,
            dropped,
        });
    }
    Ok(plan)
}

/// The bundle `head` (whose bytes are `bytes`) with only the host entry and
/// the device entries `keep` accepts, in its own format. Only the kept
/// entries are decoded ([`read_entries`]).
fn thinned_bundle(head: &Bundle, bytes: &[u8], keep: &Keep<'_>) -> Result<Vec<u8>> {
    let kept: Vec<&Entry> = head
        .entries
        .iter()
        .filter(|e| {
            let id = e.parsed_id();
            id.is_host() || keep(id.processor())
        })
        .collect();
    let data = read_entries(head, bytes, &kept)?;
    let entries: Vec<(&str, &[u8])> = kept
        .iter()
        .zip(&data)
        .map(|(e, d)| (e.id.as_str(), d.as_slice()))
        .collect();
    let plain = layout_uncompressed(&entries);
    match &head.compressed {
        None => Ok(plain),
        // The level of the original is not recorded; LLVM's default with
        // long-distance matching is what clang writes.
        Some(h) => compress(&plain, h.method, h.version, None),
    }
}

/// `f` of every item, on all cores (each worker takes the next item), in
/// the items' order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let jobs = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if jobs <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                *results[i].lock().unwrap() = Some(f(item));
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every item was mapped"))
        .collect()
}

/// The `.hip_fatbin` section at `(offset, size)` (from
/// `find_hip_fatbin`) of the ELF file `f`, read into memory.
pub fn read_hip_fatbin<R: Read + Seek>(f: &mut R, (off, len): (u64, u64)) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    usize::try_from(len)
        .ok()
        .and_then(|n| v.try_reserve_exact(n).ok())
        .with_context(|| format!("cannot allocate {len} bytes for .hip_fatbin"))?;
    f.seek(SeekFrom::Start(off))?;
    f.take(len).read_to_end(&mut v)?;
    if v.len() as u64 != len {
        bail!("truncated ELF: .hip_fatbin ends past the end of the file");
    }
    Ok(v)
}

/// File offset and size of the `.hip_fatbin` section of a 64-bit
/// little-endian ELF file, read from its headers alone (`None`: no such
/// section, or one without file contents).
pub fn find_hip_fatbin(f: &std::fs::File) -> Result<Option<(u64, u64)>> {
    let src = elf_read::FileSource::new(f.try_clone()?)?;
    let elf = match elf_read::Elf::open(&src) {
        Ok(e) if e.is_64() && e.is_little_endian() => e,
        Ok(_) | Err(elf_read::Error::NotElf) => bail!(
            "only 64-bit little-endian ELF files hold .hip_fatbin sections this tool can thin"
        ),
        Err(e) => return Err(e.into()),
    };
    Ok(elf.section_range(".hip_fatbin")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::read_bundles;
    use crate::Method;

    /// Two bundles back to back, 4096-aligned, as a linker lays out
    /// `.hip_fatbin`: one of each given format.
    fn section(formats: &[Option<(Method, u16)>]) -> Vec<u8> {
        let entries: Vec<(&str, &[u8])> = vec![
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-amdgcn-amd-amdhsa--gfx1200", &[1u8; 5000]),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &[2u8; 7000]),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", &[3u8; 300]),
        ];
        let plain = layout_uncompressed(&entries);
        let mut out = Vec::new();
        for f in formats {
            out.resize(out.len().div_ceil(4096) * 4096, 0);
            match f {
                None => out.extend_from_slice(&plain),
                Some((m, v)) => out.extend_from_slice(&compress(&plain, *m, *v, None).unwrap()),
            }
        }
        out.resize(out.len().div_ceil(4096) * 4096, 0);
        out
    }

    #[test]
    fn every_format_keeps_its_format_offset_and_kept_code() {
        let formats = [
            None,
            Some((Method::Zstd, 1)),
            Some((Method::Zlib, 2)),
            Some((Method::Zstd, 3)),
        ];
        let mut s = section(&formats);
        let before = read_bundles(&s, &Limits::default()).unwrap();
        let len = s.len();
        let keep = |p: &str| p == "gfx1200" || p == "gfx90a";
        let report = thin_section(&mut s, &keep, &Limits::default()).unwrap();
        assert_eq!(s.len(), len);
        let after = read_bundles(&s, &Limits::default()).unwrap();
        assert_eq!(after.len(), formats.len());
        for ((b, a), t) in before.iter().zip(&after).zip(&report) {
            assert_eq!(a.start, b.start);
            assert_eq!(
                a.compressed.as_ref().map(|c| (c.method, c.version)),
                b.compressed.as_ref().map(|c| (c.method, c.version))
            );
            let ids: Vec<&str> = a.entries.iter().map(|e| e.id.as_str()).collect();
            assert_eq!(
                ids,
                [
                    "host-x86_64-unknown-linux-gnu-",
                    "hipv4-amdgcn-amd-amdhsa--gfx1200",
                    "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
                ]
            );
            for e in &a.entries {
                let old = b.entries.iter().find(|o| o.id == e.id).unwrap();
                assert_eq!(a.entry_data(e), b.entry_data(old));
            }
            assert_eq!(t.kept, ["gfx1200", "gfx90a:xnack+"]);
            assert_eq!(t.dropped, ["gfx942"]);
            assert!(t.new_size < t.old_size);
            // The freed bytes are zeros.
            let end = (t.offset + t.old_size) as usize;
            assert!(s[(t.offset + t.new_size) as usize..end]
                .iter()
                .all(|&c| c == 0));
        }
    }

    #[test]
    fn refuses_to_empty_a_bundle_and_leaves_the_section_alone() {
        let mut s = section(&[Some((Method::Zstd, 3))]);
        let orig = s.clone();
        let e = thin_section(&mut s, &|p: &str| p == "gfx1100", &Limits::default()).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("holds code only for gfx1200, gfx942, gfx90a:xnack+"),
            "{msg}"
        );
        assert_eq!(s, orig);
    }

    #[test]
    fn refusal_names_what_a_generic_code_object_covers() {
        let entries: Vec<(&str, &[u8])> = vec![
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-amdgcn-amd-amdhsa--gfx12-generic", &[1u8; 100]),
        ];
        let mut s = layout_uncompressed(&entries);
        let e = thin_section(&mut s, &|p: &str| p == "gfx942", &Limits::default()).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("holds code only for gfx12-generic (gfx1200, gfx1201);"),
            "{msg}"
        );
    }
}
