//! kpack: GPU code objects stored apart from the host binaries that launch
//! them, the way ROCm's runtime loads them lazily (rocm-kpack's format).
//!
//! * [`archive`]: `.kpack` archives, read ([`Archive`]) and written
//!   ([`ArchiveWriter`]) byte for byte as the reference writes them;
//! * [`marker`]: the MessagePack marker a `HIPK` wrapper points at in the host
//!   binary (`.rocm_kpack_ref`), and the wrapper bytes;
//! * [`host`]: a linked binary's `HIPK` wrappers and their markers;
//! * [`set`]: whether they resolve among a tree's archives, as the loader
//!   resolves them;
//! * [`wheel`]: the same read from wheels, and a host wheel checked with its
//!   device wheels;
//! * [`device_set`]: a host wheel's device extras and variant wheel;
//! * [`msgpack`]: the MessagePack subset both use.
//!
//! Its fuzz bodies live in the fuzz crate (`fuzz/src/lib.rs`), outside this
//! library's build.

pub mod archive;
pub mod device_set;
pub mod host;
pub mod marker;
pub mod msgpack;
pub mod set;
pub mod wheel;

pub use archive::{
    parse_kernel_spec, toc_from, toc_of, Archive, ArchiveWriter, Compression, KernelRef,
    SeekSource, Source, Toc,
};
pub use host::{host_refs, WrapperRef};
pub use marker::{
    hipk_wrapper, markers_in_section, write_marker_files, Marker, GFXARCH, HIPF_MAGIC, HIPK_MAGIC,
    MARKER_SECTION, WRAPPER_SIZE,
};
pub use set::{check_binary, missing_groups, Archives, Problem};
