//! Writing WHEEL for a new wheel.

use std::fmt::Write as _;

use crate::tags::Tag;

/// WHEEL for a new wheel written by `generator` (`rocm-wheel 0.1.0`).
pub fn render_wheel(generator: &str, purelib: bool, tags: &[Tag]) -> String {
    let mut s = format!("Wheel-Version: 1.0\nGenerator: {generator}\nRoot-Is-Purelib: {purelib}\n");
    for t in tags {
        let _ = writeln!(s, "Tag: {t}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_file() {
        let tags = crate::parse_tags(&["py2.py3-none-any".into()]).unwrap().0;
        assert_eq!(
            render_wheel("rocm-wheel 0.1.0", true, &tags),
            "Wheel-Version: 1.0\nGenerator: rocm-wheel 0.1.0\nRoot-Is-Purelib: true\nTag: py2-none-any\nTag: py3-none-any\n"
        );
    }
}
