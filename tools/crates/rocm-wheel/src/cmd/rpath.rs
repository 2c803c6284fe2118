//! `rocm-wheel rpath`: show, set or remove DT_RUNPATH / DT_RPATH.

use anyhow::Result;
use elf_edit::{Edit, RpathKind};
use std::path::PathBuf;

pub type Args = super::Nested<Action>;

#[derive(clap::Subcommand)]
pub enum Action {
    /// Print the DT_RUNPATH / DT_RPATH entries as `RUNPATH <value>` lines.
    ///
    /// A backslash, control characters and bytes that are not UTF-8 are
    /// escaped (`\\`, `\n`, `\t`, `\r`, `\xNN`), so each entry is one line.
    Show { file: PathBuf },
    /// Set the run-time search path (in place unless --output is given).
    Set {
        file: PathBuf,
        /// Colon-separated search path, e.g. '$ORIGIN/../rocm/lib:$ORIGIN'.
        #[arg(long)]
        rpath: String,
        /// Entry type to write; an existing entry of the other type is converted.
        #[arg(long, value_enum, default_value = "runpath")]
        kind: Kind,
        /// Write the result here instead of replacing FILE.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Set DT_RUNPATH from what the file needs: its own entries, then the
    /// directories that hold its DT_NEEDED ROCm libraries in TheRock's pip
    /// SDK (`$ORIGIN`-relative to DIR) and /opt/rocm/lib.
    Rocm {
        file: PathBuf,
        /// The file's directory in the installed wheel, relative to
        /// site-packages (`jax_plugins/xla_rocm7`).
        #[arg(long)]
        dir: String,
        /// A TheRock gfx family whose `_rocm_sdk_libraries_<family>` to
        /// search (repeatable).
        #[arg(long)]
        family: Vec<String>,
        /// The file's own entries, colon-separated, instead of those it has.
        #[arg(long)]
        base: Option<String>,
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Remove all DT_RUNPATH / DT_RPATH entries.
    Remove {
        file: PathBuf,
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Kind {
    Runpath,
    Rpath,
}

pub fn run(args: Args) -> Result<()> {
    let (file, output, edit) = match args.command {
        Action::Show { file } => {
            let entries = elf_edit::read_rpath(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            print!("{}", elf_edit::rpath_lines(&entries));
            return Ok(());
        }
        Action::Set {
            file,
            rpath,
            kind,
            output,
        } => {
            let kind = match kind {
                Kind::Runpath => RpathKind::Runpath,
                Kind::Rpath => RpathKind::Rpath,
            };
            let rpath = rpath.into_bytes();
            (file, output, Edit::Set { rpath, kind })
        }
        Action::Rocm {
            file,
            dir,
            family,
            base,
            output,
        } => {
            let base: Option<Vec<String>> = base.map(|b| {
                b.split(':')
                    .filter(|e| !e.is_empty())
                    .map(str::to_string)
                    .collect()
            });
            let entries = rocm_layout::set_rocm_runpath(
                &file,
                output.as_deref(),
                &dir,
                &family,
                base.as_deref(),
            )?;
            eprintln!("rpath: RUNPATH {}", entries.join(":"));
            return Ok(());
        }
        Action::Remove { file, output } => (file, output, Edit::Remove),
    };
    let method = elf_edit::edit_file(&file, output.as_deref(), &edit)?;
    eprintln!("rpath: {}", method.describe());
    Ok(())
}
