//! Editing METADATA: renaming the distribution, the rest kept byte for
//! byte.

use anyhow::{bail, Result};

use crate::headers::{header_lines, split_header};

/// METADATA `text` with its `Name:` header replaced by `new_name`; the
/// rest, the description included, byte for byte as it was.
pub fn rename_metadata(text: &str, new_name: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut headers_len = 0;
    let mut done = false;
    for line in header_lines(text) {
        headers_len += line.len();
        let is_name = split_header(line).is_some_and(|(k, _)| k.eq_ignore_ascii_case("Name"));
        if is_name && !done {
            out.push_str(&format!("Name: {new_name}\n"));
            done = true;
        } else {
            out.push_str(line);
        }
    }
    if !done {
        bail!("METADATA has no Name field");
    }
    out.push_str(&text[headers_len..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_keeps_everything_else() {
        let m =
            "Metadata-Version: 2.1\r\nName: jax-rocm7-pjrt\r\nVersion: 1\r\n\r\nName: in body\n";
        assert_eq!(
            rename_metadata(m, "jax-rocm7-pjrt-gfx120X-all").unwrap(),
            "Metadata-Version: 2.1\r\nName: jax-rocm7-pjrt-gfx120X-all\nVersion: 1\r\n\r\nName: in body\n"
        );
        let m = "Metadata-Version: 2.1\nName: jax-rocm7-pjrt\nVersion: 1\n\nName: in body\n";
        assert_eq!(
            rename_metadata(m, "jax-rocm7-pjrt-gfx120X-all").unwrap(),
            "Metadata-Version: 2.1\nName: jax-rocm7-pjrt-gfx120X-all\nVersion: 1\n\nName: in body\n"
        );
        // A multibyte character where `Name:` would end must not panic.
        for bad in ["Versión: 1\n\nName: body\n", "Nämé: x\n", ""] {
            let e = rename_metadata(bad, "y").unwrap_err().to_string();
            assert_eq!(e, "METADATA has no Name field", "{bad:?}");
        }
    }
}
