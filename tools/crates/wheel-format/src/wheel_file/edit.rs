//! Editing WHEEL: one field set, or the tags replaced; every other line
//! kept.

use crate::headers::replace_headers;

/// WHEEL `text` with the header `key` set to `value` (where it was, else
/// at the end of the headers); every other line as it was.
pub fn set_wheel_field(text: &str, key: &str, value: &str) -> String {
    replace_headers(text, key, &format!("{key}: {value}\n"))
}

/// WHEEL `text` with its `Tag` headers replaced by `tags` (where the first
/// one was, or at the end of the headers); every other line as it was.
pub fn retag_wheel_file(text: &str, tags: &[String]) -> String {
    let new_tags: String = tags.iter().map(|t| format!("Tag: {t}\n")).collect();
    replace_headers(text, "Tag", &new_tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_a_field_in_place_or_at_the_end() {
        let w = "Wheel-Version: 1.0\nroot-is-purelib: true\nTag: py3-none-any\n\nbody\n";
        assert_eq!(
            set_wheel_field(w, "Root-Is-Purelib", "false"),
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n\nbody\n"
        );
        assert_eq!(
            set_wheel_field("Wheel-Version: 1.0", "Root-Is-Purelib", "false"),
            "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
        );
    }

    #[test]
    fn retagging_keeps_the_other_lines() {
        let text = "Wheel-Version: 1.0\nTag: py3-none-any\nRoot-Is-Purelib: true\n\
                    tag: py2-none-any\n\nTag: body\n";
        let tags = ["py3-none-manylinux_2_28_x86_64".to_string()];
        assert_eq!(
            retag_wheel_file(text, &tags),
            "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_28_x86_64\n\
             Root-Is-Purelib: true\n\nTag: body\n"
        );
        assert_eq!(
            retag_wheel_file("Wheel-Version: 1.0", &tags),
            "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_28_x86_64\n"
        );
    }
}
