pub mod build;
pub mod bundle;
pub mod check;
pub mod inspect;
pub mod kernels;
pub mod repair;
pub mod rpath;
pub mod thin;

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
