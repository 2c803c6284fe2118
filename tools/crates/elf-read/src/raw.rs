//! The ELF constants and 64-bit structure sizes the tools use, written
//! down once: goblin's values where it has them, the rest here.

pub use goblin::elf::dynamic::{
    DF_1_PIE, DT_AUDIT, DT_CONFIG, DT_DEPAUDIT, DT_FLAGS_1, DT_NEEDED, DT_NULL, DT_RPATH,
    DT_RUNPATH, DT_SONAME, DT_STRSZ, DT_STRTAB,
};
pub use goblin::elf::header::{
    EI_CLASS, EI_DATA, ELFCLASS32, ELFCLASS64, ELFDATA2LSB, ELFDATA2MSB, ELFMAG, EM_386,
    EM_AARCH64, EM_ARM, EM_PPC64, EM_RISCV, EM_S390, EM_X86_64, ET_DYN, ET_EXEC, ET_REL,
};
pub use goblin::elf::program_header::{
    PF_R, PF_W, PT_DYNAMIC, PT_INTERP, PT_LOAD, PT_NOTE, PT_NULL, PT_PHDR,
};
pub use goblin::elf::section_header::{
    SHF_ALLOC, SHF_INFO_LINK, SHN_UNDEF, SHN_XINDEX, SHT_DYNAMIC, SHT_DYNSYM, SHT_GNU_HASH,
    SHT_GNU_VERDEF, SHT_GNU_VERNEED, SHT_GNU_VERSYM, SHT_GROUP, SHT_HASH, SHT_NOBITS, SHT_NOTE,
    SHT_NULL, SHT_PROGBITS, SHT_REL, SHT_RELA, SHT_STRTAB, SHT_SYMTAB, SHT_SYMTAB_SHNDX,
};
pub use goblin::elf::sym::{STB_WEAK, STT_FUNC, STT_NOTYPE};
pub use goblin::elf::symver::VER_NDX_GLOBAL;

/// `e_machine` of AMDGPU code objects (device code, not host code);
/// goblin does not name it.
pub const EM_AMDGPU: u16 = 224;

/// `e_phnum` saying the real count is in section 0's `sh_info`.
pub const PN_XNUM: u16 = 0xffff;

/// Sizes of the ELF64 header, a program header, a section header, a
/// dynamic entry and a symbol.
pub const EHDR64_SIZE: u64 = goblin::elf64::header::SIZEOF_EHDR as u64;
pub const PHDR64_SIZE: u64 = goblin::elf64::program_header::SIZEOF_PHDR as u64;
pub const SHDR64_SIZE: u64 = goblin::elf64::section_header::SIZEOF_SHDR as u64;
pub const DYN64_SIZE: u64 = goblin::elf64::dynamic::SIZEOF_DYN as u64;
pub const SYM64_SIZE: u64 = goblin::elf64::sym::SIZEOF_SYM as u64;
