//! The bytes of the ZIP records: local headers, the central directory and
//! its end records (ZIP64 only where a value needs it), MS-DOS times.

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;

pub(crate) struct CdEntry {
    pub(crate) name: String,
    pub(crate) method: u16,
    pub(crate) crc: u32,
    pub(crate) csize: u64,
    pub(crate) usize: u64,
    pub(crate) offset: u64,
    /// `st_mode`, file type bits included.
    pub(crate) mode: u32,
    pub(crate) dos: (u16, u16),
}

/// A local header; CRC and (compressed, uncompressed) sizes are zero
/// (patched once the data is written) unless `known`.
pub(crate) fn local_header(
    name: &str,
    method: u16,
    zip64: bool,
    dos: (u16, u16),
    known: Option<(u32, (u64, u64))>,
) -> Vec<u8> {
    let (crc, (csize, usize)) = known.unwrap_or_default();
    let mut h = Vec::with_capacity(30 + name.len() + 20);
    put32(&mut h, LOCAL_SIG);
    put16(&mut h, if zip64 { 45 } else { 20 });
    put16(&mut h, flags(name));
    put16(&mut h, method);
    put16(&mut h, dos.0);
    put16(&mut h, dos.1);
    put32(&mut h, crc);
    put32(&mut h, if zip64 { u32::MAX } else { csize as u32 });
    put32(&mut h, if zip64 { u32::MAX } else { usize as u32 });
    put16(&mut h, name.len() as u16);
    put16(&mut h, if zip64 { 20 } else { 0 });
    h.extend_from_slice(name.as_bytes());
    if zip64 {
        put16(&mut h, 1);
        put16(&mut h, 16);
        put64(&mut h, usize);
        put64(&mut h, csize);
    }
    h
}

/// The central directory of `entries`, starting at `cd_start`, and its end
/// records; values from `big` on go to ZIP64 fields.
pub(crate) fn central_directory(entries: &[CdEntry], cd_start: u64, big: u64) -> Vec<u8> {
    let mut cd = Vec::new();
    for e in entries {
        let mut extra = Vec::new();
        for (v, _) in [(e.usize, 0), (e.csize, 1), (e.offset, 2)] {
            if v >= big {
                put64(&mut extra, v);
            }
        }
        let zip64 = !extra.is_empty();
        put32(&mut cd, CENTRAL_SIG);
        put16(&mut cd, (3 << 8) | if zip64 { 45 } else { 20 }); // made by: unix
        put16(&mut cd, if zip64 { 45 } else { 20 });
        put16(&mut cd, flags(&e.name));
        put16(&mut cd, e.method);
        put16(&mut cd, e.dos.0);
        put16(&mut cd, e.dos.1);
        put32(&mut cd, e.crc);
        put32(&mut cd, clamp(big, e.csize));
        put32(&mut cd, clamp(big, e.usize));
        put16(&mut cd, e.name.len() as u16);
        put16(&mut cd, if zip64 { extra.len() as u16 + 4 } else { 0 });
        put16(&mut cd, 0); // comment
        put16(&mut cd, 0); // disk
        put16(&mut cd, 0); // internal attributes
        put32(&mut cd, e.mode << 16);
        put32(&mut cd, clamp(big, e.offset));
        cd.extend_from_slice(e.name.as_bytes());
        if zip64 {
            put16(&mut cd, 1);
            put16(&mut cd, extra.len() as u16);
            cd.extend_from_slice(&extra);
        }
    }
    let cd_size = cd.len() as u64;
    let n = entries.len() as u64;
    let need64 = n >= 0xFFFF || cd_start >= big || cd_size >= big;
    if need64 {
        let rec = cd_start + cd_size;
        put32(&mut cd, ZIP64_EOCD_SIG);
        put64(&mut cd, 44);
        put16(&mut cd, (3 << 8) | 45);
        put16(&mut cd, 45);
        put32(&mut cd, 0);
        put32(&mut cd, 0);
        put64(&mut cd, n);
        put64(&mut cd, n);
        put64(&mut cd, cd_size);
        put64(&mut cd, cd_start);
        put32(&mut cd, ZIP64_LOCATOR_SIG);
        put32(&mut cd, 0);
        put64(&mut cd, rec);
        put32(&mut cd, 1);
    }
    put32(&mut cd, EOCD_SIG);
    put16(&mut cd, 0);
    put16(&mut cd, 0);
    put16(&mut cd, n.min(0xFFFF) as u16);
    put16(&mut cd, n.min(0xFFFF) as u16);
    put32(&mut cd, clamp(big, cd_size));
    put32(&mut cd, clamp(big, cd_start));
    put16(&mut cd, 0);
    cd
}

/// A 32-bit field's value, or the 0xFFFFFFFF marker if it is in ZIP64.
fn clamp(big: u64, v: u64) -> u32 {
    if v >= big {
        u32::MAX
    } else {
        v as u32
    }
}

/// Bit 11 (UTF-8 names) only when the name is not plain ASCII, like
/// Python's zipfile, so ASCII archives match what other tools write.
fn flags(name: &str) -> u16 {
    if name.is_ascii() {
        0
    } else {
        1 << 11
    }
}

pub(crate) fn put16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
pub(crate) fn put32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
pub(crate) fn put64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// MS-DOS time and date for a unix time (UTC), clamped to the DOS range;
/// `None` is 1980-01-01 00:00:00.
pub fn dos_datetime(unix: Option<u64>) -> (u16, u16) {
    const MIN: u64 = 315_532_800; // 1980-01-01T00:00:00Z
    let t = unix.unwrap_or(MIN).max(MIN);
    let days = (t / 86400) as i64;
    let secs = t % 86400;
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    if y > 2107 {
        return (
            (23 << 11) | (59 << 5) | 29,
            ((127 << 9) | (12 << 5) | 31) as u16,
        );
    }
    let time = ((secs / 3600) << 11) | (((secs % 3600) / 60) << 5) | ((secs % 60) / 2);
    let date = ((y - 1980) << 9) | (m << 5) | d;
    (time as u16, date as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dos_times() {
        assert_eq!(dos_datetime(None), (0, (1 << 5) | 1));
        assert_eq!(dos_datetime(Some(0)), (0, (1 << 5) | 1));
        // 2024-02-29T13:14:16Z
        let (t, d) = dos_datetime(Some(1_709_212_456));
        assert_eq!(d, ((2024 - 1980) << 9) | (2 << 5) | 29);
        assert_eq!(t, (13 << 11) | (14 << 5) | 8);
    }
}
