//! What a source file is, from its first bytes and its name: the member's
//! mode follows from it, and whether the wheel holds platform code.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// What a source file's first bytes say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// ELF executable or shared object (ET_EXEC, ET_DYN: PIE programs,
    /// libraries, extension modules).
    ElfLoadable,
    /// Any other ELF file (relocatable objects, core files).
    ElfOther,
    /// A `#!` script.
    Script,
    Other,
}

impl Content {
    /// A member's mode follows from what it is, never from the source's
    /// permission bits: those depend on where the action ran (remote
    /// execution marks every input executable), and a wheel's bytes must not.
    pub(crate) fn mode(self) -> u32 {
        match self {
            Content::ElfLoadable | Content::Script => 0o755,
            Content::ElfOther | Content::Other => 0o644,
        }
    }

    pub(crate) fn is_elf(self) -> bool {
        matches!(self, Content::ElfLoadable | Content::ElfOther)
    }
}

/// Reads at most the 18 bytes of an ELF header's e_ident + e_type.
pub(crate) fn sniff(path: &Path) -> Result<Content> {
    let mut head = [0u8; 18];
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    if n >= 2 && head[..2] == *b"#!" {
        return Ok(Content::Script);
    }
    if n < 4 || head[..4] != *b"\x7fELF" {
        return Ok(Content::Other);
    }
    if n < 18 {
        return Ok(Content::ElfOther);
    }
    // e_type at offset 16, in the byte order EI_DATA (offset 5) names.
    let e_type = match head[5] {
        2 => u16::from_be_bytes([head[16], head[17]]),
        _ => u16::from_le_bytes([head[16], head[17]]),
    };
    Ok(match e_type {
        2 | 3 => Content::ElfLoadable,
        _ => Content::ElfOther,
    })
}

/// `x.so`, `x.so.1.2`, `x.pyd`, `x.dll`, `x.dylib`: platform code by name.
pub(crate) fn is_native_name(path: &str) -> bool {
    let mut name = path.rsplit('/').next().unwrap_or(path);
    // Strip a version suffix such as `.1.2` of `libfoo.so.1.2`.
    while let Some((stem, ext)) = name.rsplit_once('.') {
        if !ext.is_empty() && ext.bytes().all(|b| b.is_ascii_digit()) {
            name = stem;
        } else {
            break;
        }
    }
    [".so", ".pyd", ".dll", ".dylib"]
        .iter()
        .any(|e| name.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_names() {
        for yes in [
            "a/b.so",
            "libx.so.1",
            "x.so.1.23",
            "m.cpython-312-x86_64-linux-gnu.so",
            "m.pyd",
            "a.dll",
            "a.dylib",
        ] {
            assert!(is_native_name(yes), "{yes}");
        }
        for no in ["a/b.py", "x.so.py", "so", "a/.so.d/x.txt", "x.sox", "v1.2"] {
            assert!(!is_native_name(no), "{no}");
        }
    }
}
