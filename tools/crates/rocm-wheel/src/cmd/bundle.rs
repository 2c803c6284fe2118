//! `rocm-wheel bundle`: write, list and extract clang offload bundles.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use offload_bundle::{Bundle, Compression, Limits, Method, WriteRequest};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Bundle AMDGPU code objects into one offload bundle (.hipfb).
    Write(WriteArgs),
    /// List the bundles and entries of a bundle file or of an ELF file's .hip_fatbin.
    List(ListArgs),
    /// Extract the code object of one GPU target.
    Extract(ExtractArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum CompressArg {
    None,
    Zstd,
    Zlib,
}

#[derive(clap::Args)]
struct WriteArgs {
    /// Output bundle file (written atomically).
    #[arg(long)]
    output: PathBuf,
    /// Store uncompressed (default) or as a compressed CCOB bundle.
    #[arg(long, value_enum, default_value = "none")]
    compress: CompressArg,
    /// CCOB format version for compressed output (3 allows > 4 GiB).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(2..=3))]
    format_version: u16,
    /// Compression level (zstd: 1..=22, default 3; zlib: 0..=9, default 6).
    #[arg(long)]
    level: Option<i32>,
    /// Host triple of the (empty) host entry.
    #[arg(long)]
    host_triple: String,
    /// ID=CODE_OBJECT, e.g. hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx90a.co (repeatable).
    #[arg(long = "entry", value_name = "ID=FILE", required = true)]
    entries: Vec<String>,
}

#[derive(clap::Args)]
struct ListArgs {
    /// Bundle file, or ELF file (.so/.o) with a .hip_fatbin section.
    file: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ExtractArgs {
    /// Bundle file, or ELF file (.so/.o) with a .hip_fatbin section.
    file: PathBuf,
    /// GPU processor (gfx90a), target id (gfx90a:xnack+) or full entry id.
    #[arg(long)]
    target: String,
    /// Where to write the code object (atomically).
    #[arg(long)]
    output: PathBuf,
    /// Index of the bundle to take it from when several hold the target.
    #[arg(long)]
    bundle: Option<usize>,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Write(a) => write(a),
        Cmd::List(a) => list(a),
        Cmd::Extract(a) => extract(a),
    }
}

fn write(a: WriteArgs) -> Result<()> {
    let mut entries = Vec::with_capacity(a.entries.len());
    for e in &a.entries {
        let Some((id, path)) = e.split_once('=') else {
            bail!(
                "--entry `{e}` is not ID=FILE (e.g. hipv4-amdgcn-amd-amdhsa--gfx90a=k.gfx90a.co)"
            );
        };
        entries.push((id.to_string(), PathBuf::from(path)));
    }
    let method = match a.compress {
        CompressArg::None => None,
        CompressArg::Zstd => Some(Method::Zstd),
        CompressArg::Zlib => Some(Method::Zlib),
    };
    let compression = match method {
        None => {
            if a.level.is_some() {
                bail!("--level needs --compress zstd or --compress zlib");
            }
            Compression::None
        }
        Some(method) => Compression::Compressed {
            method,
            version: a.format_version,
            level: a.level,
        },
    };
    offload_bundle::write_bundle_file(&WriteRequest {
        output: a.output,
        host_triple: a.host_triple,
        entries,
        compression,
    })
}

/// The bytes holding the bundles: the file, or its `.hip_fatbin` section.
fn bundle_bytes(data: &[u8]) -> Result<Option<&[u8]>> {
    if data.starts_with(b"\x7fELF") {
        offload_bundle::hip_fatbin_section(data)
    } else {
        Ok(Some(data))
    }
}

/// Walks the bundles one at a time (only one decompressed bundle is held),
/// calling `f` with each.
fn each_bundle(
    file: &Path,
    data: &[u8],
    headers_only: bool,
    mut f: impl FnMut(usize, Bundle) -> Result<()>,
) -> Result<usize> {
    let Some(bytes) = bundle_bytes(data).with_context(|| format!("{}", file.display()))? else {
        return Ok(0);
    };
    let mut it = offload_bundle::BundleIter::new(bytes, &Limits::default());
    if headers_only {
        it = it.headers_only();
    }
    let mut n = 0;
    for b in it {
        let b = b.with_context(|| format!("{}", file.display()))?;
        f(n, b)?;
        n += 1;
    }
    if n == 0 && !data.starts_with(b"\x7fELF") {
        bail!(
            "{}: not an offload bundle: the file is empty or all zeros",
            file.display()
        );
    }
    Ok(n)
}

fn read_input(file: &Path) -> Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}

fn list(a: ListArgs) -> Result<()> {
    let data = read_input(&a.file)?;
    let mut bundles = Vec::new();
    each_bundle(&a.file, &data, true, |_, b| {
        bundles.push(b);
        Ok(())
    })?;
    if a.json {
        println!("{}", offload_bundle::bundles_json(&bundles));
        return Ok(());
    }
    if bundles.is_empty() {
        println!("{}: no .hip_fatbin section", a.file.display());
    }
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
        println!(
            "bundle {i} at offset {}: {how}, {} entries",
            b.start,
            b.entries.len()
        );
        for e in &b.entries {
            println!("  {}  offset {} size {}", e.id, e.offset, e.size);
        }
    }
    Ok(())
}

fn extract(a: ExtractArgs) -> Result<()> {
    // Entry lists first (headers only), then only the chosen bundle is
    // decompressed: memory stays within one bundle.
    let data = read_input(&a.file)?;
    let mut hits: Vec<(usize, String)> = Vec::new();
    let mut have: Vec<String> = Vec::new();
    let mut chosen: Option<(u64, u64)> = None;
    each_bundle(&a.file, &data, true, |i, b| {
        for e in b.device_entries() {
            let p = e.parsed_id();
            have.push(p.target_id.to_string());
            if a.bundle.is_some_and(|n| n != i) {
                continue;
            }
            if e.id == a.target || p.target_id == a.target || p.processor() == a.target {
                hits.push((i, e.id.clone()));
                chosen.get_or_insert((b.start, b.len));
            }
        }
        Ok(())
    })?;
    if let (Some((start, len)), 1) = (chosen, hits.len()) {
        let bytes = bundle_bytes(&data)?.unwrap_or(&[]);
        let one = &bytes[start as usize..(start + len) as usize];
        let b = offload_bundle::read_bundle(one, &Limits::default())
            .with_context(|| format!("{}: bundle {}", a.file.display(), hits[0].0))?;
        let e = b
            .entries
            .iter()
            .find(|e| e.id == hits[0].1)
            .expect("listed entry");
        return offload_bundle::write_atomically(&a.output, b.entry_data(e));
    }
    match hits.len() {
        0 => bail!(
            "{}: no entry for target `{}`{}; targets present: {}",
            a.file.display(),
            a.target,
            a.bundle
                .map(|n| format!(" in bundle {n}"))
                .unwrap_or_default(),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ),
        _ => {
            let names: Vec<String> = hits
                .iter()
                .map(|(i, id)| format!("bundle {i}: {id}"))
                .collect();
            bail!(
                "{}: target `{}` is ambiguous ({}); pass a full target id or --bundle N",
                a.file.display(),
                a.target,
                names.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    //! The command line the Bazel rules use, parsed and run in-process.
    use super::*;
    use crate::cmd::parse_args;

    fn rw(argv: &[&str]) -> Result<()> {
        run(parse_args::<Args>("bundle", argv)?)
    }

    /// The ELF header of an AMDGPU code object for `mach` (enough for the
    /// writer's checks; real code objects are used in the crate tests).
    fn code_object(mach: u8, fill: u8) -> Vec<u8> {
        let mut e = vec![fill; 256];
        e[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
        e[8] = 3; // code object v5
        e[16] = 3; // ET_DYN
        e[17] = 0;
        e[18..20].copy_from_slice(&224u16.to_le_bytes());
        // No program or section headers: a structurally valid ELF file.
        e[20..64].fill(0);
        e[48..52].copy_from_slice(&(mach as u32 | 0x100).to_le_bytes()); // xnack any
        e[52] = 64; // e_ehsize
        e
    }

    /// `bundle write` of two entries for the x86-64 host.
    fn write(out: &str, compress: &str, version: &str, entries: [&str; 2]) -> Result<()> {
        let host = "x86_64-unknown-linux-gnu";
        rw(&[
            "write",
            "--output",
            out,
            "--compress",
            compress,
            "--format-version",
            version,
            "--host-triple",
            host,
            "--entry",
            entries[0],
            "--entry",
            entries[1],
        ])
    }

    #[test]
    fn write_list_extract() {
        let dir =
            std::env::temp_dir().join(format!("rocm-wheel-bundle-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = |n: &str| dir.join(n).display().to_string();
        std::fs::write(p("a.co"), code_object(0x3f, 1)).unwrap();
        std::fs::write(p("b.co"), code_object(0x48, 2)).unwrap();
        for (compress, version) in [("none", "2"), ("zstd", "2"), ("zlib", "3"), ("zstd", "3")] {
            let gfx90a = format!("hipv4-amdgcn-amd-amdhsa--gfx90a={}", p("a.co"));
            let gfx1200 = format!("hipv4-amdgcn-amd-amdhsa--gfx1200={}", p("b.co"));
            let out = p(&format!("k.{compress}{version}.hipfb"));
            write(&out, compress, version, [&gfx90a, &gfx1200]).unwrap();
            let data = std::fs::read(&out).unwrap();
            // Deterministic, whatever the order of --entry flags.
            let again = p("again.hipfb");
            write(&again, compress, version, [&gfx1200, &gfx90a]).unwrap();
            assert_eq!(std::fs::read(&again).unwrap(), data, "{compress}{version}");
            let want_magic: &[u8] = if compress == "none" {
                b"__CLANG"
            } else {
                b"CCOB"
            };
            assert!(data.starts_with(want_magic), "{compress}");
            rw(&["list", &out]).unwrap();
            rw(&["list", "--json", &out]).unwrap();
            let x = p("x.co");
            rw(&["extract", &out, "--target", "gfx1200", "--output", &x]).unwrap();
            assert_eq!(std::fs::read(&x).unwrap(), code_object(0x48, 2));
            let e = rw(&["extract", &out, "--target", "gfx906", "--output", &x]).unwrap_err();
            assert!(
                format!("{e:#}").contains("targets present: gfx1200, gfx90a"),
                "{e:#}"
            );
        }
        // Bad flags are refused by the parser, before anything is written.
        let bad = p("bad.hipfb");
        for argv in [
            vec![
                "write",
                "--output",
                &bad,
                "--host-triple",
                "x",
                "--format-version",
                "4",
            ],
            vec![
                "write",
                "--output",
                &bad,
                "--host-triple",
                "x",
                "--compress",
                "lz4",
            ],
            vec!["write", "--output", &bad, "--host-triple", "x"],
        ] {
            assert!(rw(&argv).is_err(), "{argv:?}");
        }
        let e = rw(&[
            "write",
            "--output",
            &bad,
            "--host-triple",
            "x86_64-unknown-linux-gnu",
            "--entry",
            "gfx90a",
        ])
        .unwrap_err();
        assert!(format!("{e:#}").contains("is not ID=FILE"), "{e:#}");
        assert!(!std::path::Path::new(&bad).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
