//! Writing a planned thinning: each unpacked member's `.hip_fatbin` is
//! read into memory (one at a time), thinned in place and written back;
//! the rewriter replaces the members that lost code objects and writes
//! the wheel atomically.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{Context, Result};
use gfx_targets::keeps;
use offload_bundle::thin::{read_hip_fatbin, thin_section};

use crate::plan::Plan;
use crate::report::{Report, ThinnedMember};

/// Writes the thinned wheel `output` as `plan` says.
pub fn apply(plan: Plan, output: &Path) -> Result<Report> {
    let Plan {
        mut wheel,
        keep,
        members,
        limits,
    } = plan;
    let keep_fn = |p: &str| keeps(&keep, p);
    let mut report = Report::default();
    for mut u in members {
        let f = u.file.as_file_mut();
        let mut data = read_hip_fatbin(f, u.section)?;
        let thinned = thin_section(&mut data, &keep_fn, &limits)
            .with_context(|| format!("{}: .hip_fatbin", u.name))?;
        if thinned.iter().any(|t| !t.dropped.is_empty()) {
            let (off, len) = u.section;
            f.seek(SeekFrom::Start(off))?;
            f.write_all(&data)?;
            wheel.replace_unpacked(&u.name, u.file, off..off + len)?;
            report.members.push(ThinnedMember {
                path: u.name,
                bundles: thinned,
            });
        }
    }
    wheel.finish(output)?;
    Ok(report)
}
