//! Bounds of a [`Parsed`] file: every segment and section with bytes in
//! the file lies inside it.

use crate::names::pt_to_str;
use crate::raw::{SHT_NOBITS, SHT_NULL};
use crate::{Error, Parsed, Result};

impl Parsed<'_> {
    /// Checks that every segment and section the loader would read lies
    /// inside the file, so a truncated file is reported instead of half
    /// read; [`Error::Invalid`] names the first that does not.
    pub fn check_bounds(&self) -> Result<()> {
        let len = self.bytes.len() as u64;
        for (i, ph) in self.program_headers().iter().enumerate() {
            let end = ph.p_offset.checked_add(ph.p_filesz);
            if !matches!(end, Some(e) if e <= len) {
                return Err(Error::Invalid(format!(
                    "program header {i} ({}) covers bytes {}..{} but the file has {len} bytes",
                    pt_to_str(ph.p_type),
                    ph.p_offset,
                    ph.p_offset.saturating_add(ph.p_filesz)
                )));
            }
        }
        for (i, sh) in self.section_headers().iter().enumerate() {
            if sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL {
                continue;
            }
            let end = sh.sh_offset.checked_add(sh.sh_size);
            if !matches!(end, Some(e) if e <= len) {
                let name = self.section_name(sh).unwrap_or("?");
                return Err(Error::Invalid(format!(
                    "section {i} ({name}) covers bytes {}..{} but the file has {len} bytes",
                    sh.sh_offset,
                    sh.sh_offset.saturating_add(sh.sh_size)
                )));
            }
        }
        Ok(())
    }
}
