//! Names of ELF values, for reports and messages.

use crate::raw::{EM_386, EM_AARCH64, EM_AMDGPU, EM_ARM, EM_PPC64, EM_RISCV, EM_S390, EM_X86_64};

/// The CPU of `e_machine` as `uname -m` names it (`x86_64`, `aarch64`,
/// `aarch64_be` for big-endian files, `amdgpu`), else `e_machine=N`.
pub fn machine_name(e_machine: u16, little_endian: bool) -> String {
    match e_machine {
        EM_X86_64 => "x86_64".into(),
        EM_386 => "i686".into(),
        EM_AARCH64 if little_endian => "aarch64".into(),
        EM_AARCH64 => "aarch64_be".into(),
        EM_PPC64 => "ppc64".into(),
        EM_S390 => "s390x".into(),
        EM_ARM => "armv7l".into(),
        EM_RISCV => "riscv64".into(),
        EM_AMDGPU => "amdgpu".into(),
        other => format!("e_machine={other}"),
    }
}

/// `e_machine` as the ELF specification names it (`X86_64`, `AARCH64`).
pub fn machine_to_str(e_machine: u16) -> &'static str {
    goblin::elf::header::machine_to_str(e_machine)
}

/// `e_type` as the ELF specification names it (`DYN`, `REL`, `CORE`).
pub fn et_to_str(e_type: u16) -> &'static str {
    goblin::elf::header::et_to_str(e_type)
}

/// `p_type` as the ELF specification names it (`PT_LOAD`, `PT_NOTE`).
pub fn pt_to_str(p_type: u32) -> &'static str {
    goblin::elf::program_header::pt_to_str(p_type)
}
