//! The host side of a kpack binary: the MessagePack marker a `HIPK` fat-binary
//! wrapper points at (the `.rocm_kpack_ref` section), and the wrapper itself.

use std::collections::HashSet;

use anyhow::{bail, Context, Result};

use crate::msgpack::{self, Budget, Encoder, Value};

/// Section holding the markers in a host object or linked binary.
pub const MARKER_SECTION: &str = ".rocm_kpack_ref";
/// Placeholder in search paths that the loader replaces by each GPU target.
pub const GFXARCH: &str = "@GFXARCH@";
/// `__CudaFatBinaryWrapper.magic` of a fat binary (`HIPF`, little-endian u32).
pub const HIPF_MAGIC: u32 = 0x4849_5046;
/// `__CudaFatBinaryWrapper.magic` of a kpack reference (`HIPK`).
pub const HIPK_MAGIC: u32 = 0x4B50_4948;
/// Size of one `__CudaFatBinaryWrapper` in `.hipFatBinSegment` (x86_64).
pub const WRAPPER_SIZE: usize = 24;
/// The loader parses at most this many bytes of a marker.
pub const MAX_MARKER_SIZE: usize = 64 * 1024;
/// Bytes a decoded marker may take per byte of its encoding (plus 4 KiB):
/// a marker kpack writes needs about 2.
pub const MARKER_DECODE_FACTOR: u64 = 4;

/// What a `HIPK` wrapper points at: the archive key (without `#<index>`) and
/// where to look for archives, relative to the binary's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kernel_name: String,
    pub search_paths: Vec<String>,
}

impl Marker {
    /// The encoding the reference transform writes (keys in its order).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        if self.search_paths.is_empty() {
            bail!("a kpack marker needs at least one search path (the loader refuses one without)");
        }
        let mut e = Encoder::default();
        e.map(2)
            .str("kpack_search_paths")
            .array(self.search_paths.len());
        for p in &self.search_paths {
            e.str(p);
        }
        e.str("kernel_name").str(&self.kernel_name);
        if e.buf.len() > MAX_MARKER_SIZE {
            bail!(
                "kpack marker of {} bytes; the loader reads at most {MAX_MARKER_SIZE}: shorten the kernel name or search paths",
                e.buf.len()
            );
        }
        Ok(e.buf)
    }

    /// Reads the marker at the start of `bytes`, as the loader does (other
    /// keys ignored, non-string search paths skipped); returns it and its
    /// encoded length. Repeated search paths are kept once (the loader
    /// would find the same nothing twice), in first-seen order, so the
    /// marker takes at most [`MARKER_DECODE_FACTOR`] times its encoded
    /// bytes (plus 4 KiB) in memory, and time linear in them.
    pub fn parse(bytes: &[u8]) -> Result<(Marker, usize)> {
        let window = &bytes[..bytes.len().min(MAX_MARKER_SIZE)];
        let (v, used) = msgpack::decode(window).context("reading a kpack marker")?;
        if !matches!(v, Value::Map(_)) {
            bail!("a kpack marker is a MessagePack map, found {}", v.kind());
        }
        let mut budget = Budget::new(used, MARKER_DECODE_FACTOR, 4 << 10, "the kpack marker");
        let [kernel_name, search_paths] = v.fields(["kernel_name", "kpack_search_paths"]);
        let kernel_name = match kernel_name {
            Some(Value::Str(s)) => budget.string(s)?,
            Some(other) => bail!(
                "kpack marker: kernel_name is {}, not a string",
                other.kind()
            ),
            None => bail!("kpack marker without kernel_name"),
        };
        let search_paths: Vec<String> = match search_paths {
            Some(Value::Array(items)) => {
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                let mut last = None;
                for p in items.values().filter_map(|i| i.as_str()) {
                    // A run of one path costs a comparison, not a lookup.
                    if last != Some(p) && seen.insert(p) {
                        // The set's entry and the vector's slot (grown by
                        // doubling) as well as the string.
                        budget.charge(2 * std::mem::size_of::<&str>() as u64 + 16)?;
                        out.push(budget.string(p)?);
                    }
                    last = Some(p);
                }
                out
            }
            Some(other) => bail!(
                "kpack marker: kpack_search_paths is {}, not an array",
                other.kind()
            ),
            None => bail!("kpack marker without kpack_search_paths"),
        };
        if search_paths.is_empty() {
            bail!("kpack marker for {kernel_name}: no search path (the loader refuses it)");
        }
        Ok((
            Marker {
                kernel_name,
                search_paths,
            },
            used,
        ))
    }
}

/// The markers of a `.rocm_kpack_ref` section, back to back in link order
/// (one per translation unit built with kpack markers).
pub fn markers_in_section(section: &[u8]) -> Result<Vec<Marker>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < section.len() {
        let (m, used) = Marker::parse(&section[pos..])
            .with_context(|| format!("marker at byte {pos} of .rocm_kpack_ref"))?;
        out.push(m);
        pos += used;
    }
    Ok(out)
}

/// The `.hipFatBinSegment` contents of a kpack host object: one wrapper with
/// magic `HIPK`, version 1, the marker pointer left to the relocation (0 in
/// place) and `reserved1` = the code object index.
pub fn hipk_wrapper(co_index: u32) -> [u8; WRAPPER_SIZE] {
    let mut w = [0u8; WRAPPER_SIZE];
    w[..4].copy_from_slice(&HIPK_MAGIC.to_le_bytes());
    w[4..8].copy_from_slice(&1u32.to_le_bytes());
    w[16..20].copy_from_slice(&co_index.to_le_bytes());
    w
}

/// Writes `marker` to `output` and, with `wrapper`, its `HIPK` wrapper
/// for code object `co_index`: both files or neither. Every search path
/// must hold [`GFXARCH`] (one archive per GPU target).
pub fn write_marker_files(
    marker: &Marker,
    output: &std::path::Path,
    wrapper: Option<(&std::path::Path, u32)>,
) -> Result<()> {
    if !marker.search_paths.iter().all(|p| p.contains(GFXARCH)) {
        bail!(
            "every search path must contain {GFXARCH} (one archive per GPU target): {:?}",
            marker.search_paths
        );
    }
    let mut outputs: Vec<(&std::path::Path, Box<dyn std::io::Read>)> =
        vec![(output, Box::new(std::io::Cursor::new(marker.to_bytes()?)))];
    if let Some((path, co_index)) = wrapper {
        if atomic_write::resolved_path(path) == atomic_write::resolved_path(output) {
            bail!(
                "the wrapper and the marker output are both {}: give two files",
                path.display()
            );
        }
        let bytes = hipk_wrapper(co_index).to_vec();
        outputs.push((path, Box::new(std::io::Cursor::new(bytes))));
    }
    atomic_write::write_all_or_none(outputs, 0o644)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_loader_rules() {
        let m = Marker {
            kernel_name: "pkg/_hip/lib/a.hip".into(),
            search_paths: vec![
                ".kpack/@GFXARCH@.kpack".into(),
                "../.kpack/@GFXARCH@.kpack".into(),
            ],
        };
        let bytes = m.to_bytes().unwrap();
        let mut twice = bytes.clone();
        twice.extend(&bytes);
        let (back, used) = Marker::parse(&twice).unwrap();
        assert_eq!((back, used), (m.clone(), bytes.len()));
        assert!(Marker {
            search_paths: vec![],
            ..m
        }
        .to_bytes()
        .is_err());
    }

    #[test]
    fn wrapper_says_hipk() {
        let w = hipk_wrapper(3);
        assert_eq!(&w[..4], b"HIPK");
        assert_eq!(u32::from_le_bytes(w[16..20].try_into().unwrap()), 3);
    }
}
