//! `rocm-wheel thin`: a wheel with device code for some GPU families only.
//!
//! The steps are kept apart as in `wheel-repair`: [`plan`] opens the wheel
//! once (through the wheel rewriter, [`wheel_rewrite`]), renames
//! it if asked, unpacks every ELF member whose `.hip_fatbin` holds device
//! code into a temporary file next to the output and refuses what cannot
//! be thinned, before anything is written; [`apply`] thins each such
//! section in place and has the rewriter write the wheel: every other
//! member is copied as its compressed bytes, a thinned member's deflate
//! stream is reused outside `.hip_fatbin` (only the section and its
//! surroundings are deflated again, in parallel), RECORD is rewritten;
//! [`Report`] says what each bundle kept.
//!
//! A kpack host wheel with its device wheels (a split set) is thinned by
//! choosing device wheels instead ([`split`]).

mod apply;
mod plan;
mod report;
mod split;

use std::path::{Path, PathBuf};

use anyhow::Result;

pub use offload_bundle::thin::ThinnedBundle;
pub use report::{DeviceWheelChoice, Report, ThinnedMember};

/// What to thin, as `rocm-wheel thin` takes it.
pub struct Request<'a> {
    /// The wheel to thin.
    pub input: &'a Path,
    /// The output wheel (written atomically), named as the wheel's own
    /// file name (or the renamed distribution's).
    pub output: &'a Path,
    /// Families and/or targets to keep, comma-separated
    /// ([`gfx_targets::expand`]).
    pub gfx: &'a str,
    /// Renames the distribution to `NAME-SUFFIX`.
    pub name_suffix: Option<&'a str>,
    /// The device wheels of a kpack host wheel: the ones serving `gfx` are
    /// copied next to the output, the host wheel unchanged.
    pub device_wheels: &'a [PathBuf],
}

/// Thins `req.input` into `req.output`; every refusal comes before
/// anything is written.
pub fn thin(req: &Request) -> Result<Report> {
    if !req.device_wheels.is_empty() {
        return split::thin_set(req);
    }
    let plan = plan::plan(req)?;
    apply::apply(plan, req.output)
}
