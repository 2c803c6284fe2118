//! WHEEL, the wheel format file of a `.dist-info`: read, edited (a field
//! set, retagged) and rendered (for `build`).

mod edit;
mod read;
mod render;

pub use edit::{retag_wheel_file, set_wheel_field};
pub use read::WheelFile;
pub use render::render_wheel;
