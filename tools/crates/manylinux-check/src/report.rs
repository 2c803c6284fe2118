//! Report types (the `--json` schema) and the human-readable rendering.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::elf::ElfKind;
use crate::policy::Arch;

/// Bumped on any incompatible change of the JSON output.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable identifier, e.g. `symbol-version`; see README.md.
    pub code: &'static str,
    /// Wheel member the finding is about; `null` for wheel-level findings.
    pub file: Option<String>,
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ElfReport {
    /// Member path inside the wheel.
    pub path: String,
    pub kind: ElfKind,
    pub machine: String,
    pub soname: Option<String>,
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
    /// Library -> version requirements from `.gnu.version_r`.
    pub version_requirements: BTreeMap<String, BTreeSet<String>>,
    /// DT_NEEDED libraries found inside the wheel: soname -> member path.
    pub bundled: BTreeMap<String, String>,
    /// DT_NEEDED libraries accepted through the external allowlist.
    pub allowed_external: Vec<String>,
    /// DT_NEEDED libraries the system must provide (manylinux whitelist).
    pub system: Vec<String>,
    /// DT_NEEDED libraries that are none of the above.
    pub unresolved: Vec<String>,
    pub isa_needed: Option<String>,
    /// Most compatible platform tag this ELF alone satisfies
    /// (`linux_<arch>` if none; `null` for ELFs of another CPU than the
    /// wheel's and device code).
    pub platform_tag: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub wheel: String,
    /// The CPU the wheel is judged for (`x86_64`, `aarch64`): the one its
    /// platform tags name, else the one of its host ELF files.
    pub arch: Arch,
    /// Platform tags from the wheel's file name (or `WHEEL` if the name
    /// does not parse).
    pub claimed_platform_tags: Vec<String>,
    pub root_is_purelib: Option<bool>,
    /// Policy the ELFs were checked against (`--policy`, else the most
    /// compatible claimed manylinux tag), e.g. `manylinux_2_28_x86_64`.
    pub target_policy: Option<String>,
    /// Most compatible platform tag all host ELFs (of `arch`) satisfy, like
    /// `auditwheel show`'s "consistent with"; `linux_<arch>` if no manylinux
    /// policy fits; `null` if the wheel has no host ELF of `arch`.
    pub platform_tag: Option<String>,
    pub elfs: Vec<ElfReport>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}

/// Exit status of `rocm-wheel check`: no error-level findings.
pub const EXIT_CLEAN: i32 = 0;
/// Exit status: at least one error-level finding.
pub const EXIT_FINDINGS: i32 = 1;
/// Exit status: usage error or unreadable input.
pub const EXIT_BAD_INPUT: i32 = 2;

impl Report {
    pub fn has_errors(&self) -> bool {
        self.summary.errors > 0
    }

    /// [`EXIT_FINDINGS`] if any finding is an error, else [`EXIT_CLEAN`].
    pub fn exit_code(&self) -> i32 {
        if self.has_errors() {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        }
    }

    pub(crate) fn finish(&mut self) {
        // Errors first, then by file, so the important lines lead.
        self.findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.code.cmp(b.code))
                .then_with(|| a.message.cmp(&b.message))
        });
        self.findings.dedup();
        let mut s = Summary::default();
        for f in &self.findings {
            match f.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        self.summary = s;
    }

    /// Pretty-printed JSON (schema in README.md).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }

    /// One line per finding (`severity[code] file: message; fix: hint`),
    /// then a summary line.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            let file = f.file.as_deref().unwrap_or(&self.wheel);
            let _ = writeln!(
                out,
                "{}[{}] {}: {}; fix: {}",
                f.severity.as_str(),
                f.code,
                file,
                f.message,
                f.hint
            );
        }
        let none = format!("none (no {} ELF files)", self.arch);
        let tag = self.platform_tag.as_deref().unwrap_or(&none);
        let claimed = if self.claimed_platform_tags.is_empty() {
            "nothing".to_string()
        } else {
            self.claimed_platform_tags.join(".")
        };
        let _ = writeln!(
            out,
            "{}: {} ELF file(s); consistent with platform tag {tag}; claims {claimed}; {} error(s), {} warning(s), {} note(s)",
            self.wheel,
            self.elfs.len(),
            self.summary.errors,
            self.summary.warnings,
            self.summary.infos
        );
        out
    }
}
