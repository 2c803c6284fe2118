//! Bounded-memory reading of large ELF members: the reader shared with
//! `rocm-wheel inspect` ([`wheel_inspect::elf_image`]).

use anyhow::Result;
pub use wheel_inspect::elf_image::{elf_image, ImageOptions, Reopen, HEAD_CAP};

/// Members at most this big are read whole.
pub const SPARSE_THRESHOLD: u64 = wheel_inspect::elf_image::WHOLE_MAX;

/// Reads a member of `size` bytes keeping only what the checker parses,
/// with at most `head_cap` bytes of the file start.
pub fn sparse_image(reopen: &mut Reopen, size: u64, head_cap: u64) -> Result<Vec<u8>> {
    let opts = ImageOptions {
        whole_max: 0,
        head_cap,
        ..ImageOptions::default()
    };
    elf_image(reopen, size, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::read_elf;
    use std::io::Read;

    /// A [`Reopen`] over a plain file.
    fn file_reopen(path: &std::path::Path) -> Box<Reopen<'_>> {
        Box::new(move |f| {
            let mut file = std::fs::File::open(path)?;
            f(&mut file)
        })
    }

    /// Real libraries of this machine give identical facts read whole and
    /// read sparsely, with a generous head and with a head so small that
    /// pass 2 must fetch the dynamic sections.
    #[test]
    fn sparse_matches_full_on_system_libraries() {
        let libs = [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
            "/usr/lib/x86_64-linux-gnu/libm.so.6",
            "/usr/lib/x86_64-linux-gnu/libz.so.1",
        ];
        let mut checked = 0;
        for lib in libs {
            let path = std::path::Path::new(lib);
            let Ok(full) = std::fs::read(path) else {
                continue;
            };
            let want = read_elf(&full).unwrap();
            for cap in [HEAD_CAP, 0] {
                let mut reopen = file_reopen(path);
                let image = sparse_image(&mut *reopen, full.len() as u64, cap).unwrap();
                let got = read_elf(&image).unwrap();
                assert_eq!(got, want, "{lib} with head cap {cap}");
                // Sparse means sparse: most of the image stayed zero.
                let kept = image
                    .iter()
                    .zip(&full)
                    .filter(|(a, b)| a == b && **a != 0)
                    .count();
                let nonzero = full.iter().filter(|b| **b != 0).count();
                if cap == 0 && full.len() > (1 << 20) {
                    assert!(kept < nonzero, "{lib}: nothing was skipped");
                }
            }
            checked += 1;
        }
        assert!(
            checked >= 2,
            "expected system libraries under /usr/lib/x86_64-linux-gnu"
        );
    }

    #[test]
    fn short_entries_are_errors() {
        let data = [0x7fu8, b'E', b'L', b'F', 2, 1, 1];
        let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| f(&mut &data[..]);
        let e = sparse_image(&mut reopen, 100, HEAD_CAP)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shorter than the 100 bytes"), "{e}");
    }
}
