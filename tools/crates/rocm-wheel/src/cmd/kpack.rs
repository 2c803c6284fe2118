//! `rocm-wheel kpack`: the pieces of a kpack build — the marker and `HIPK`
//! wrapper a host object carries, the per-target archives, and their listing.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use kpack::{hipk_wrapper, Archive, ArchiveWriter, Compression, Marker};

pub type Args = super::Nested<Cmd>;

#[derive(Subcommand)]
pub enum Cmd {
    /// Write the marker a HIPK wrapper points at, and the wrapper.
    ///
    /// The marker (MessagePack) names the archive key and where archives are
    /// searched for, relative to the directory of the binary that ends up
    /// holding it; @GFXARCH@ in a path stands for each GPU target.
    Marker(MarkerArgs),
    /// Write one .kpack archive from code object files.
    ///
    /// Every file is sized before anything is read or written: each must be
    /// a regular file of at most 2 GiB, all together at most 4 GiB (what
    /// readers accept); memory holds one kernel and its zstd frame at a
    /// time.
    Archive(ArchiveArgs),
    /// List an archive's targets and kernels.
    List(ListArgs),
}

#[derive(clap::Args)]
pub struct MarkerArgs {
    /// Archive key without the `#<index>` suffix.
    #[arg(long)]
    kernel_name: String,
    /// Archive path to search (repeat, in order); relative to the binary's directory.
    #[arg(long = "search-path", required = true)]
    search_paths: Vec<String>,
    /// Marker output (the .rocm_kpack_ref section's contents).
    #[arg(long)]
    output: PathBuf,
    /// Also write the 24-byte HIPK wrapper (.hipFatBinSegment's contents).
    #[arg(long)]
    wrapper_output: Option<PathBuf>,
    /// Code object index the wrapper carries (`#<index>` of the key).
    #[arg(long, default_value_t = 0)]
    co_index: u32,
}

#[derive(Clone, Copy, ValueEnum)]
enum CompressionArg {
    None,
    Zstd,
}

#[derive(clap::Args)]
pub struct ArchiveArgs {
    /// group_name of the TOC (the package the archive belongs to).
    #[arg(long)]
    group: String,
    /// gfx_arch_family of the TOC (the target, for a per-target archive).
    #[arg(long)]
    family: String,
    /// A GPU target the archive serves (repeat); the loader matches on these.
    #[arg(long = "target", required = true)]
    targets: Vec<String>,
    #[arg(long, value_enum, default_value = "zstd")]
    compression: CompressionArg,
    /// KEY@TARGET=FILE: the code object FILE as KEY (`<name>#<index>`) for TARGET (repeat).
    #[arg(long = "kernel", required = true)]
    kernels: Vec<String>,
    #[arg(long)]
    output: PathBuf,
}

#[derive(clap::Args)]
pub struct ListArgs {
    archive: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Marker(a) => marker(a),
        Cmd::Archive(a) => archive(a),
        Cmd::List(a) => list(a),
    }
}

fn marker(a: MarkerArgs) -> Result<()> {
    let m = Marker {
        kernel_name: a.kernel_name,
        search_paths: a.search_paths,
    };
    if !m.search_paths.iter().all(|p| p.contains(kpack::GFXARCH)) {
        bail!(
            "every search path must contain {} (one archive per GPU target): {:?}",
            kpack::GFXARCH,
            m.search_paths
        );
    }
    let bytes = m.to_bytes()?;
    // Both outputs or neither.
    let mut outputs: Vec<(&Path, Box<dyn std::io::Read>)> =
        vec![(&a.output, Box::new(std::io::Cursor::new(bytes)))];
    if let Some(w) = &a.wrapper_output {
        if atomic_write::resolved_path(w) == atomic_write::resolved_path(&a.output) {
            bail!(
                "--wrapper-output and --output are both {}: give two files",
                w.display()
            );
        }
        let wrapper = hipk_wrapper(a.co_index).to_vec();
        outputs.push((w, Box::new(std::io::Cursor::new(wrapper))));
    }
    atomic_write::write_all_or_none(outputs, 0o644)
}

fn archive(a: ArchiveArgs) -> Result<()> {
    let compression = match a.compression {
        CompressionArg::None => Compression::None,
        CompressionArg::Zstd => Compression::ZstdPerKernel,
    };
    let mut w = ArchiveWriter::new(&a.group, &a.family, &a.targets, compression);
    for spec in &a.kernels {
        let parsed = spec
            .split_once('=')
            .and_then(|(kt, file)| kt.rsplit_once('@').map(|(k, t)| (k, t, file)));
        let Some((key, target, file)) = parsed else {
            bail!("--kernel {spec:?}: want KEY@TARGET=FILE, e.g. pkg/_hip/lib/a.hip#0@gfx1201=a.gfx1201.co");
        };
        w.add(key, target, file.as_ref())
            .with_context(|| format!("--kernel {spec}"))?;
    }
    w.write(&a.output)
}

fn list(a: ListArgs) -> Result<()> {
    let ar = Archive::open(&a.archive)?;
    let toc = &ar.toc;
    if a.json {
        println!("{}", serde_json::to_string_pretty(toc)?);
        return Ok(());
    }
    println!(
        "{}: group {}, family {}, targets {}, {} kernels ({})",
        a.archive.display(),
        toc.group_name,
        toc.gfx_arch_family,
        toc.gfx_arches.join(","),
        toc.kernel_count(),
        toc.compression.scheme()
    );
    for (key, arches) in &toc.binaries {
        for (arch, r) in arches {
            println!("  {key} {arch} {} bytes", r.original_size);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::parse_args;

    fn rw(argv: &[&str]) -> Result<()> {
        run(parse_args::<Args>("kpack", argv)?)
    }

    #[test]
    fn marker_outputs_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
        rw(&[
            "marker",
            "--kernel-name",
            "pkg/a.hip",
            "--search-path",
            ".kpack/@GFXARCH@.kpack",
            "--output",
            &p("m"),
            "--wrapper-output",
            &p("w"),
        ])
        .unwrap();
        let (m, _) = Marker::parse(&std::fs::read(p("m")).unwrap()).unwrap();
        assert_eq!(m.kernel_name, "pkg/a.hip");
        assert_eq!(&std::fs::read(p("w")).unwrap()[..4], b"HIPK");
        let err = rw(&[
            "marker",
            "--kernel-name",
            "k",
            "--search-path",
            "x.kpack",
            "--output",
            &p("m2"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("@GFXARCH@"), "{err}");
        assert!(!dir.path().join("m2").exists());
        // An output that cannot be written leaves the other unwritten too,
        // and one file given as both is refused.
        let both = |output: &str, wrapper: &str| {
            rw(&[
                "marker",
                "--kernel-name",
                "k",
                "--search-path",
                ".kpack/@GFXARCH@.kpack",
                "--output",
                &p(output),
                "--wrapper-output",
                &p(wrapper),
            ])
            .unwrap_err()
            .to_string()
        };
        let err = both("missing/m3", "w3");
        assert!(err.contains("temporary file"), "{err}");
        assert!(!dir.path().join("w3").exists());
        assert!(both("m4", "m4").contains("give two files"));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") || n == "w3" || n == "m4")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn archive_and_list() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
        std::fs::write(p("a.co"), b"code object").unwrap();
        let kernel = format!("pkg/a.hip#0@gfx1201={}", p("a.co"));
        rw(&[
            "archive",
            "--group",
            "pkg",
            "--family",
            "gfx1201",
            "--target",
            "gfx1201",
            "--kernel",
            &kernel,
            "--output",
            &p("x.kpack"),
        ])
        .unwrap();
        let mut ar = Archive::open(dir.path().join("x.kpack").as_path()).unwrap();
        assert_eq!(ar.kernel("pkg/a.hip#0", "gfx1201").unwrap(), b"code object");
        let bad = rw(&[
            "archive",
            "--group",
            "g",
            "--family",
            "f",
            "--target",
            "gfx1201",
            "--kernel",
            "nofile",
            "--output",
            &p("y"),
        ]);
        assert!(bad.unwrap_err().to_string().contains("KEY@TARGET=FILE"));
        rw(&["list", &p("x.kpack")]).unwrap();
    }
}
