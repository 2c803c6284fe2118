//! wheel-inspect (placeholder; see the owning issue).
