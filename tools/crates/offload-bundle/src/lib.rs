//! offload-bundle (placeholder; see the owning issue).
