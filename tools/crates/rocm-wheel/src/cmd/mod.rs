pub mod build;
pub mod bundle;
pub mod check;
mod check_kpack;
pub mod device_extras;
pub mod glibc_floor;
pub mod index;
pub mod inspect;
pub mod kernels;
pub mod kpack;
pub mod repair;
pub mod rpath;
pub mod thin;
pub mod variant;

use std::path::Path;

use anyhow::Context;

/// A command made of subcommands (`bundle write`, `kernels check`).
#[derive(clap::Args)]
pub struct Nested<C: clap::Subcommand> {
    #[command(subcommand)]
    pub command: C,
}

/// An input file, whole, or an error that names it.
pub(crate) fn read_input(file: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
}

/// Parses `argv` as the arguments of subcommand `name`: the command line
/// the Bazel rules use, for in-process tests of a command.
#[cfg(test)]
pub(crate) fn parse_args<A: clap::Args>(
    name: &'static str,
    argv: &[&str],
) -> clap::error::Result<A> {
    let matches = A::augment_args(clap::Command::new(name))
        .try_get_matches_from(std::iter::once(name).chain(argv.iter().copied()))?;
    <A as clap::FromArgMatches>::from_arg_matches(&matches)
}
