//! manylinux / ELF checker for wheels (`rocm-wheel check`).
//!
//! For every ELF member of a wheel: DT_NEEDED libraries and versioned symbol
//! requirements against the manylinux policies of the wheel's architecture
//! (x86_64 or aarch64), forbidden symbols, ISA level (x86_64), rpath
//! hygiene; then the platform tag the ELFs need and whether the wheel's
//! claimed tag is consistent with it. See `README.md` for the
//! findings and the JSON schema.

mod analyze;
mod elf;
pub mod environment;
mod glob;
pub mod policy;
mod report;
pub mod wheel;

pub use analyze::{
    check_wheel, check_wheel_file, expand_origin, is_build_tree_rpath, wheel_arch, Options,
    DEFAULT_ALLOWED_EXTERNALS, DEFAULT_ALLOWED_RPATHS,
};
pub use elf::{ElfFacts, ElfKind};
pub use policy::Arch;
pub use report::{
    ElfReport, Finding, Report, Severity, Summary, EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_FINDINGS,
    SCHEMA_VERSION,
};
