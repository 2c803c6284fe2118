//! `rocm-wheel rpath`: show, set or remove DT_RUNPATH / DT_RPATH.

use anyhow::Result;
use elf_edit::{Edit, Method, RpathKind};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
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
    /// Remove all DT_RUNPATH / DT_RPATH entries.
    Remove {
        file: PathBuf,
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Kind {
    Runpath,
    Rpath,
}

pub fn run(args: Args) -> Result<()> {
    match args.action {
        Action::Show { file } => {
            let entries = elf_edit::read_rpath(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            if entries.is_empty() {
                println!("(no RUNPATH or RPATH)");
            }
            for e in entries {
                println!("{} {}", e.kind.name(), e.value_escaped());
            }
            Ok(())
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
            let edit = Edit::Set {
                rpath: rpath.into_bytes(),
                kind,
            };
            report(elf_edit::edit_file(&file, output.as_deref(), &edit)?);
            Ok(())
        }
        Action::Remove { file, output } => {
            report(elf_edit::edit_file(
                &file,
                output.as_deref(),
                &Edit::Remove,
            )?);
            Ok(())
        }
    }
}

fn report(method: Method) {
    let how = match method {
        Method::Unchanged => "unchanged",
        Method::InPlace => "rewritten in place",
        Method::Appended { .. } => "grown: new .dynstr in an appended segment",
    };
    eprintln!("rpath: {how}");
}
