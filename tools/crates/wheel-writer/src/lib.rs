//! wheel-writer (placeholder; see the owning issue).
