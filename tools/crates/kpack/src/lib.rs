//! kpack: GPU code objects stored apart from the host binaries that launch
//! them, the way ROCm's runtime loads them lazily (rocm-kpack's format).
//!
//! * [`archive`]: `.kpack` archives, read ([`Archive`]) and written
//!   ([`ArchiveWriter`]) byte for byte as the reference writes them;
//! * [`marker`]: the MessagePack marker a `HIPK` wrapper points at in the host
//!   binary (`.rocm_kpack_ref`), and the wrapper bytes;
//! * [`msgpack`]: the MessagePack subset both use.

pub mod archive;
pub mod marker;
pub mod msgpack;

pub use archive::{Archive, ArchiveWriter, Compression, KernelRef, Toc};
pub use marker::{
    hipk_wrapper, Marker, GFXARCH, HIPF_MAGIC, HIPK_MAGIC, MARKER_SECTION, WRAPPER_SIZE,
};
