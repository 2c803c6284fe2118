//! `rocm-wheel bundle`: write, list and extract clang offload bundles.

mod extract;
mod list;
mod write;

use anyhow::Result;
use clap::Subcommand;

pub type Args = super::Nested<Cmd>;

#[derive(Subcommand)]
pub enum Cmd {
    /// Bundle AMDGPU code objects into one offload bundle (.hipfb).
    Write(write::Args),
    /// List the bundles and entries of a bundle file or of an ELF file's .hip_fatbin.
    List(list::Args),
    /// Extract the code object of one GPU target.
    Extract(extract::Args),
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Cmd::Write(a) => write::run(a),
        Cmd::List(a) => list::run(a),
        Cmd::Extract(a) => extract::run(a),
    }
}

use super::read_input;

#[cfg(test)]
mod tests;
