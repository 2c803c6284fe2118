//! `rocm-wheel kpack marker`: [`kpack::write_marker_files`].

use std::path::PathBuf;

use anyhow::Result;
use kpack::Marker;

#[derive(clap::Args)]
pub struct Args {
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

pub fn run(a: Args) -> Result<()> {
    let marker = Marker {
        kernel_name: a.kernel_name,
        search_paths: a.search_paths,
    };
    let wrapper = a.wrapper_output.as_deref().map(|w| (w, a.co_index));
    kpack::write_marker_files(&marker, &a.output, wrapper)
}
