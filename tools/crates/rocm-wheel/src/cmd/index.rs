//! `rocm-wheel index`: a static package index of folders of wheels and
//! sdists ([`wheel_index::write_index`]).

use std::path::PathBuf;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Folders of wheels and sdists (every file in one must be either) or
    /// such files. Sdists are named as PEP 625 says,
    /// `<name>-<version>.tar.gz`. A file given twice (same name, same
    /// bytes) is indexed once.
    #[arg(required = true, value_name = "DIR_OR_WHEEL")]
    inputs: Vec<PathBuf>,
    /// The index directory: must not exist or be empty. Written whole or
    /// not at all (built next to it, then renamed into place).
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let s = wheel_index::write_index(&args.inputs, &args.output)?;
    println!(
        "{}: {} wheels of {} projects",
        args.output.display(),
        s.files,
        s.projects
    );
    Ok(())
}
