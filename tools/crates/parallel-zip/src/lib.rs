//! parallel-zip: the ZIP engine of `build` and of the wheel rewriter
//! (`thin`, `repair`): deterministic, with large members deflated in
//! parallel. It knows nothing of wheels.
//!
//! Why not the `zip` crate: it deflates each entry on one thread, and the
//! wheels this project builds are dominated by a few hundred-MB libraries,
//! so one core would set the build time. Here an entry of at least
//! [`CHUNKED_MIN`] bytes is cut into [`CHUNK`]-sized pieces that worker
//! threads deflate, each primed with the preceding 32 KiB as a preset
//! dictionary and ended with a sync flush, so the pieces concatenate into
//! one valid deflate stream (as pigz does). The output does not depend on
//! the number of threads.
//!
//! Format: local headers patched in place after the data is streamed (no
//! data descriptors), a central directory, ZIP64 only when sizes or offsets
//! need it, fixed timestamps (unless an entry brings its own: raw copies
//! from another archive, [`ParallelZipWriter::add_reader_dated`]), unix
//! permissions, no other extra fields.
//!
//! Entries already compressed elsewhere are copied as their compressed
//! bytes ([`ParallelZipWriter::add_raw`]): the header is written from what
//! the source's central directory says, the data is not inflated.//!
//! An edited copy of a member keeps the member's deflate stream outside the
//! edit ([`ParallelZipWriter::add_spliced`], on the block map
//! [`inflate_mapped`] makes while inflating it).

mod chunks;
mod deflate_map;
// The oracle tests reach the writer's test-only ZIP64 switch: unit tests.
#[cfg(test)]
mod oracles;
mod records;
mod writer;

pub use deflate_map::{inflate_mapped, Boundary, DeflateMap, MAP_STEP, WINDOW};
pub use records::dos_datetime;
pub use writer::{ParallelZipWriter, RawEntry, Written, CHUNK, CHUNKED_MIN};
