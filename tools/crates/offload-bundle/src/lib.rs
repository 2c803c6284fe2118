//! Clang offload bundles: the containers HIP uses to carry one code object per
//! GPU target (`.hipfb` files, the `.hip_fatbin` section of host objects).
//!
//! Formats (all integers little-endian):
//!
//! * Uncompressed: magic `__CLANG_OFFLOAD_BUNDLE__`, u64 entry count, then per
//!   entry u64 offset, u64 size, u64 id length, id bytes; entry data follows
//!   at the recorded offsets (4096-aligned as clang writes them).
//! * Compressed: magic `CCOB`, u16 version, u16 method (0 zlib, 1 zstd), then
//!   v1: u32 uncompressed size, u64 hash; v2: u32 total size, u32
//!   uncompressed size, u64 hash; v3: u64 total size, u64 uncompressed size,
//!   u64 hash; then the compressed stream of an uncompressed bundle. The
//!   hash is the low 64 bits of the MD5 of the uncompressed bundle (LLVM's
//!   `MD5Result::low()`, i.e. the first 8 digest bytes read little-endian).
//!
//! [`write`] builds bundles the way `clang-offload-bundler` does; [`read`]
//! reads single bundles and back-to-back sequences defensively.

mod amdgpu;
pub mod kernels;
mod partial;
pub mod read;
pub mod thin;
pub mod write;

pub use amdgpu::{
    check_code_object, mach_of_processor, processor_of_mach, read_code_object_header,
    validate_device_id, CodeObjectHeader, EntryId, EF_AMDGPU_MACH, EM_AMDGPU,
};
pub use read::{read_bundle, read_bundles, Bundle, BundleIter, CompressedHeader, Entry, Limits};
pub use write::{
    build_uncompressed, compress, host_entry_id, write_atomically, write_bundle_file, Compression,
    WriteRequest,
};

/// Magic of an uncompressed bundle.
pub const MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";
/// Alignment of entry data, and of bundles within a `.hip_fatbin` section.
pub const BUNDLE_ALIGN: u64 = 4096;

/// Compression method of a `CCOB` bundle (values as stored in the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Zlib,
    Zstd,
}

impl Method {
    pub fn from_raw(v: u16) -> Option<Method> {
        match v {
            0 => Some(Method::Zlib),
            1 => Some(Method::Zstd),
            _ => None,
        }
    }

    pub fn raw(self) -> u16 {
        match self {
            Method::Zlib => 0,
            Method::Zstd => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Zlib => "zlib",
            Method::Zstd => "zstd",
        }
    }
}

/// Header size of a `CCOB` bundle of the given version.
pub(crate) fn ccob_header_size(version: u16) -> Option<usize> {
    match version {
        1 => Some(20),
        2 => Some(24),
        3 => Some(32),
        _ => None,
    }
}

/// The hash stored in `CCOB` headers.
pub(crate) fn md5_low(data: &[u8]) -> u64 {
    use md5::Digest;
    let d = md5::Md5::digest(data);
    u64::from_le_bytes(d[..8].try_into().unwrap())
}

/// The contents of the `.hip_fatbin` section of an ELF file (`None` when the
/// file has no such section, or one without bytes in the file).
pub fn hip_fatbin_section(elf: &[u8]) -> anyhow::Result<Option<&[u8]>> {
    let range = elf_read::Elf::open(elf)?.section_range(".hip_fatbin")?;
    Ok(range.map(|(off, len)| &elf[off as usize..(off + len) as usize]))
}

/// The bytes holding a file's bundles: the file itself, or an ELF file's
/// `.hip_fatbin` section (`None`: an ELF file without one).
pub fn file_bundle_bytes(data: &[u8]) -> anyhow::Result<Option<&[u8]>> {
    if data.starts_with(elf_read::raw::ELFMAG) {
        hip_fatbin_section(data)
    } else {
        Ok(Some(data))
    }
}

/// Walks the bundles of a file (a bundle file, one bundle or several back
/// to back, or an ELF file's `.hip_fatbin`) one at a time, so only one
/// decoded bundle is held, calling `f` with each bundle's index and the
/// bundle (only its header with `headers_only`); returns how many there
/// are. A file other than ELF without a bundle is refused.
pub fn each_file_bundle(
    data: &[u8],
    headers_only: bool,
    mut f: impl FnMut(usize, Bundle) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let Some(bytes) = file_bundle_bytes(data)? else {
        return Ok(0);
    };
    let mut it = BundleIter::new(bytes, &Limits::default());
    if headers_only {
        it = it.headers_only();
    }
    let mut n = 0;
    for b in it {
        f(n, b?)?;
        n += 1;
    }
    if n == 0 && !data.starts_with(elf_read::raw::ELFMAG) {
        anyhow::bail!("not an offload bundle: the file is empty or all zeros");
    }
    Ok(n)
}

/// Reads the bundles of a file ([`each_file_bundle`]), all held at once.
pub fn read_file_bundles(data: &[u8]) -> anyhow::Result<Vec<Bundle>> {
    let mut bundles = Vec::new();
    each_file_bundle(data, false, |_, b| {
        bundles.push(b);
        Ok(())
    })?;
    Ok(bundles)
}

/// The one bundle of a file ([`each_file_bundle`]) holding code for
/// `target` (a processor such as `gfx90a`, a target id such as
/// `gfx90a:xnack+`, or a full entry id), decoded, and the index of that
/// entry in it. `bundle`: only that bundle is searched. Entry lists are
/// read first (headers only), then only the chosen bundle is decoded, so
/// memory stays within one bundle.
pub fn find_file_entry(
    data: &[u8],
    target: &str,
    bundle: Option<usize>,
) -> anyhow::Result<(Bundle, usize)> {
    use anyhow::Context;
    let mut hits: Vec<(usize, String)> = Vec::new();
    let mut have: Vec<String> = Vec::new();
    let mut chosen: Option<(u64, u64)> = None;
    each_file_bundle(data, true, |i, b| {
        for e in b.device_entries() {
            let p = e.parsed_id();
            have.push(p.target_id.to_string());
            if bundle.is_some_and(|n| n != i) {
                continue;
            }
            if e.id == target || p.target_id == target || p.processor() == target {
                hits.push((i, e.id.clone()));
                chosen.get_or_insert((b.start, b.len));
            }
        }
        Ok(())
    })?;
    if let (Some((start, len)), 1) = (chosen, hits.len()) {
        let bytes = file_bundle_bytes(data)?.unwrap_or(&[]);
        let one = &bytes[start as usize..(start + len) as usize];
        let b = read_bundle(one, &Limits::default())
            .with_context(|| format!("bundle {}", hits[0].0))?;
        let k = (b.entries.iter().position(|e| e.id == hits[0].1)).expect("listed entry");
        return Ok((b, k));
    }
    if hits.is_empty() {
        anyhow::bail!(
            "no entry for target `{target}`{}; targets present: {}",
            bundle
                .map(|n| format!(" in bundle {n}"))
                .unwrap_or_default(),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        );
    }
    let names: Vec<String> = hits
        .iter()
        .map(|(i, id)| format!("bundle {i}: {id}"))
        .collect();
    anyhow::bail!(
        "target `{target}` is ambiguous ({}); pass a full target id or --bundle N",
        names.join(", ")
    )
}

/// JSON description of bundles, as printed by `rocm-wheel bundle list --json`:
/// `{"bundles": [{"offset", "size", "compressed": null | {"version", "method",
/// "total_size", "uncompressed_size", "hash"}, "entries":
/// [{"id", "offset", "size"}]}]}`.
pub fn bundles_json(bundles: &[Bundle]) -> String {
    let v: Vec<_> = bundles
        .iter()
        .map(|b| {
            serde_json::json!({
                "offset": b.start,
                "size": b.len,
                "compressed": b.compressed,
                "entries": b.entries,
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "bundles": v }))
        .expect("JSON values always serialize")
}

/// The bundles as `rocm-wheel bundle list` shows them: one line per bundle
/// (its offset, format and entry count), one per entry.
pub fn bundles_text(bundles: &[Bundle]) -> String {
    let mut s = String::new();
    for (i, b) in bundles.iter().enumerate() {
        let how = match &b.compressed {
            None => "uncompressed".to_string(),
            Some(c) => format!(
                "{} (CCOB v{}, {} -> {} bytes)",
                c.method.name(),
                c.version,
                b.len,
                c.uncompressed_size
            ),
        };
        s += &format!(
            "bundle {i} at offset {}: {how}, {} entries\n",
            b.start,
            b.entries.len()
        );
        for e in &b.entries {
            s += &format!("  {}  offset {} size {}\n", e.id, e.offset, e.size);
        }
    }
    s
}

/// The body of the `read_bundle` fuzz target (also run over the committed
/// corpus by a normal test): reading arbitrary bytes must never panic.
/// Returns the device targets found, or the error. Feature `fuzzing`.
#[cfg(feature = "fuzzing")]
pub fn fuzz_read(data: &[u8]) -> anyhow::Result<Vec<String>> {
    // Small limit so the fuzzer cannot spend its memory on one input.
    let limits = Limits {
        max_uncompressed: 1 << 24,
    };
    let single = read_bundle(data, &limits);
    let bundles = read_bundles(data, &limits)?;
    if let Ok(b) = &single {
        assert_eq!(
            bundles.len(),
            1,
            "a single bundle reads as a sequence of one"
        );
        assert_eq!(b.uncompressed(), bundles[0].uncompressed());
    }
    let mut targets = Vec::new();
    for b in &bundles {
        for e in &b.entries {
            assert_eq!(b.entry_data(e).len() as u64, e.size);
            let id = e.parsed_id();
            if !id.is_host() {
                targets.push(id.processor().to_string());
            }
        }
    }
    Ok(targets)
}
