//! elf-edit (placeholder; see the owning issue).
