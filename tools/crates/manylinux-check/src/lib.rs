//! manylinux-check (placeholder; see the owning issue).
