//! METADATA, the core metadata file of a `.dist-info`: read (a wheel's
//! identity), edited (renamed) and rendered (for `build`).

mod edit;
mod read;
mod render;

pub use edit::rename_metadata;
pub use read::{read_text_member, wheel_identity, MAX_TEXT_MEMBER};
pub use render::{append_description, render_metadata, CoreMetadata};
