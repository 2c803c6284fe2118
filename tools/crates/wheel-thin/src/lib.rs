//! `rocm-wheel thin`: a wheel with device code for some GPU families only.
//!
//! The steps are kept apart as in `wheel-repair`: [`plan`] opens the wheel
//! once (through the wheel rewriter, [`wheel_writer::rewrite`]), renames
//! it if asked, unpacks every ELF member whose `.hip_fatbin` holds device
//! code into a temporary file next to the output and refuses what cannot
//! be thinned, before anything is written; [`apply`] thins each such
//! section in place and has the rewriter write the wheel: every other
//! member is copied as its compressed bytes, a thinned member's deflate
//! stream is reused outside `.hip_fatbin` (only the section and its
//! surroundings are deflated again, in parallel), RECORD is rewritten;
//! [`Report`] says what each bundle kept.

mod apply;
mod plan;
mod report;

use std::path::Path;

use anyhow::Result;

pub use offload_bundle::thin::ThinnedBundle;
pub use report::{Report, ThinnedMember};

/// What to thin, as `rocm-wheel thin` takes it.
pub struct Request<'a> {
    /// The wheel to thin.
    pub input: &'a Path,
    /// The output wheel (written atomically), named as the wheel's own
    /// file name (or the renamed distribution's).
    pub output: &'a Path,
    /// Families and/or targets to keep, comma-separated
    /// ([`offload_bundle::families::expand`]).
    pub gfx: &'a str,
    /// Renames the distribution to `NAME-SUFFIX`.
    pub name_suffix: Option<&'a str>,
}

/// Thins `req.input` into `req.output`; every refusal comes before
/// anything is written.
pub fn thin(req: &Request) -> Result<Report> {
    let plan = plan::plan(req)?;
    apply::apply(plan, req.output)
}
