//! What a repair changed: the `--json` schema (README.md) and the
//! human-readable rendering.

use std::fmt::Write as _;

use manylinux_check::Finding;
use serde::Serialize;

use crate::entries::Reason;

/// Bumped on any incompatible change of the JSON output.
pub const SCHEMA_VERSION: u32 = 1;

/// One search path entry of an ELF file and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub value: String,
    pub kept: bool,
    pub reason: Reason,
}

/// An ELF file whose search path changed.
#[derive(Debug, Clone, Serialize)]
pub struct ElfChange {
    /// Member path inside the wheel.
    pub path: String,
    /// `DT_RUNPATH` or `DT_RPATH` (the tag that was, and is, written).
    pub kind: &'static str,
    /// The new search path; empty: the tag was removed.
    pub after: Vec<String>,
    /// Every old entry, in order.
    pub entries: Vec<Entry>,
    /// How elf-edit wrote it: `in-place` (the new string over the old
    /// one), `appended` (a new `.dynstr` in an appended segment).
    pub method: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change<T> {
    pub before: T,
    pub after: T,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub input: String,
    /// The output file's path as given (or joined to the `-o` directory).
    pub output: String,
    /// `false`: the wheel needed no repair and the output is a byte copy
    /// of the input.
    pub changed: bool,
    pub platform_tags: Change<Vec<String>>,
    pub root_is_purelib: Change<Option<bool>>,
    /// The platform tag `rocm-wheel check` proves for the repaired wheel.
    pub proven_platform_tag: Option<String>,
    pub elfs: Vec<ElfChange>,
    /// Warnings and notes `rocm-wheel check` still has on the output
    /// (errors are refused).
    pub check: CheckSummary,
    /// What repair found wrong but does not change (METADATA's
    /// `License-Expression`): warnings with a code, message and hint.
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckSummary {
    pub warnings: usize,
    pub infos: usize,
}

impl Report {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }

    /// A few lines: the outcome, the tag and purelib changes, then per ELF
    /// file its new search path and each dropped entry with the reason.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        if !self.changed {
            let _ = writeln!(
                out,
                "{}: nothing to repair; {} is a copy",
                self.input, self.output
            );
        } else {
            let _ = writeln!(out, "{} -> {}", self.input, self.output);
        }
        if self.platform_tags.before != self.platform_tags.after {
            let _ = writeln!(
                out,
                "  platform tag: {} -> {}",
                self.platform_tags.before.join("."),
                self.platform_tags.after.join(".")
            );
        }
        if self.root_is_purelib.before != self.root_is_purelib.after {
            let _ = writeln!(
                out,
                "  Root-Is-Purelib: true -> false (the wheel has native code)"
            );
        }
        for e in &self.elfs {
            let dropped = e.entries.iter().filter(|x| !x.kept).count();
            let new = if e.after.is_empty() {
                "(removed)".to_string()
            } else {
                e.after.join(":")
            };
            let _ = writeln!(
                out,
                "  {}: {} kept {} of {} entries, dropped {dropped}: {new}",
                e.path,
                e.kind,
                e.after.len(),
                e.entries.len()
            );
            for x in e.entries.iter().filter(|x| !x.kept) {
                let _ = writeln!(out, "    dropped {:?} ({})", x.value, x.reason.describe());
            }
        }
        let _ = writeln!(
            out,
            "  rocm-wheel check: platform tag {}; 0 errors, {} warning(s), {} note(s)",
            self.proven_platform_tag
                .as_deref()
                .unwrap_or("none (no host ELF files)"),
            self.check.warnings,
            self.check.infos
        );
        for f in &self.findings {
            let _ = writeln!(
                out,
                "  {} [{}] {}: {}\n    {}",
                f.severity.as_str(),
                f.code,
                f.file.as_deref().unwrap_or("wheel"),
                f.message,
                f.hint
            );
        }
        out
    }
}
