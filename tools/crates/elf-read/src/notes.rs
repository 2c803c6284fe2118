//! Notes of a [`Parsed`] file: the x86-64 ISA level of the GNU property
//! note.

use crate::raw::SHT_NOTE;
use crate::Parsed;

const NT_GNU_PROPERTY_TYPE_0: u32 = 5;
const GNU_PROPERTY_X86_ISA_1_NEEDED: u32 = 0xc000_8002;

impl Parsed<'_> {
    /// The x86-64 micro-architecture level (`x86_64_v3`) the GNU property
    /// note says the file needs; `None` without one (or at baseline). The
    /// note is x86-64's: on other CPUs the same number means other things.
    pub fn x86_isa_needed(&self) -> Option<String> {
        // The SHT_NOTE sections walked by hand, bounds-checked; a
        // malformed entry ends the walk.
        let le = self.is_little_endian();
        for sh in self
            .section_headers()
            .iter()
            .filter(|s| s.sh_type == SHT_NOTE)
        {
            let start = sh.sh_offset as usize;
            let data = self
                .bytes
                .get(start..start.checked_add(sh.sh_size as usize)?)?;
            let align = if sh.sh_addralign == 8 { 8 } else { 4 };
            let pad = |n: usize| n.div_ceil(align) * align;
            let mut off = 0usize;
            while off + 12 <= data.len() {
                let namesz = read_u32(data, off, le)? as usize;
                let descsz = read_u32(data, off + 4, le)? as usize;
                let n_type = read_u32(data, off + 8, le)?;
                let name_off = off + 12;
                let desc_off = pad(name_off.checked_add(namesz)?);
                let desc = data.get(desc_off..desc_off.checked_add(descsz)?)?;
                let name = data.get(name_off..name_off + namesz)?;
                if n_type == NT_GNU_PROPERTY_TYPE_0 && name == b"GNU\0" {
                    // Properties: u32 type, u32 size, data padded to the word size.
                    let word = if self.is_64() { 8 } else { 4 };
                    let mut p = 0usize;
                    while p + 8 <= desc.len() {
                        let pr_type = read_u32(desc, p, le)?;
                        let pr_size = read_u32(desc, p + 4, le)? as usize;
                        if pr_type == GNU_PROPERTY_X86_ISA_1_NEEDED && pr_size == 4 {
                            return isa_level(read_u32(desc, p + 8, le)?);
                        }
                        p = p + 8 + pr_size.div_ceil(word) * word;
                    }
                }
                off = pad(desc_off + descsz);
            }
        }
        None
    }
}

/// The x86-64 ISA level from a GNU_PROPERTY_X86_ISA_1_NEEDED bitmask
/// (bit 0 baseline, 1 v2, 2 v3, 3 v4).
fn isa_level(bits: u32) -> Option<String> {
    let level = if bits & 8 != 0 {
        4
    } else if bits & 4 != 0 {
        3
    } else if bits & 2 != 0 {
        2
    } else {
        return None;
    };
    Some(format!("x86_64_v{level}"))
}

fn read_u32(b: &[u8], off: usize, le: bool) -> Option<u32> {
    let a: [u8; 4] = b.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(if le {
        u32::from_le_bytes(a)
    } else {
        u32::from_be_bytes(a)
    })
}

#[cfg(test)]
mod tests {
    use super::isa_level;

    #[test]
    fn isa_levels() {
        assert_eq!(isa_level(1), None);
        assert_eq!(isa_level(0b11).as_deref(), Some("x86_64_v2"));
        assert_eq!(isa_level(0b111).as_deref(), Some("x86_64_v3"));
        assert_eq!(isa_level(0b1111).as_deref(), Some("x86_64_v4"));
    }
}
