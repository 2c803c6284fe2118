//! `rocm-wheel kpack`: the pieces of a kpack build — the marker and `HIPK`
//! wrapper a host object carries, the per-target archives, and their listing.

mod archive;
mod list;
mod marker;

use anyhow::Result;
use clap::Subcommand;

pub type Args = super::Nested<Cmd>;

#[derive(Subcommand)]
pub enum Cmd {
    /// Write the marker a HIPK wrapper points at, and the wrapper.
    ///
    /// The marker (MessagePack) names the archive key and where archives are
    /// searched for, relative to the directory of the binary that ends up
    /// holding it; @GFXARCH@ in a path stands for each GPU target.
    Marker(marker::Args),
    /// Write one .kpack archive from code object files.
    ///
    /// Every file is sized before anything is read or written: each must be
    /// a regular file of at most 2 GiB, all together at most 4 GiB (what
    /// readers accept); memory holds one kernel and its zstd frame at a
    /// time.
    Archive(archive::Args),
    /// List an archive's targets and kernels.
    List(list::Args),
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Marker(a) => marker::run(a),
        Cmd::Archive(a) => archive::run(a),
        Cmd::List(a) => list::run(a),
    }
}

#[cfg(test)]
mod tests;
