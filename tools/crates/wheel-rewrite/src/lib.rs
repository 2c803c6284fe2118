//! wheel-rewrite: rewriting an existing wheel (as auditwheel's `wheeltools`
//! does for `repair`; `thin` too): open it, replace, add or remove members,
//! rename the distribution, retag, and [`WheelRewriter::finish`].
//!
//! Members nobody changed are copied as their compressed bytes (never
//! inflated), with their time and permissions; changed and added ones are
//! deflated by parallel-zip's writer (large ones in parallel); an unpacked
//! member edited in a few bytes keeps its deflate stream around the edit.
//! RECORD keeps the rows of unchanged members as written, gets new hashes
//! for what changed and is written last. The output appears atomically or
//! not at all.

mod members;
mod rewriter;

pub use members::Source;
pub use rewriter::WheelRewriter;
