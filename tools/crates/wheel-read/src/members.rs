//! The member list of a wheel as its central directory stores it, checked
//! with the member-name rules `rocm-wheel build` writes by
//! ([`wheel_format::MemberSet`]). The zip crate keeps one entry per
//! name, so duplicates are only visible here.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use anyhow::{bail, Context, Result};

/// One central directory record.
#[derive(Debug, Clone)]
pub struct RawMember {
    pub name: String,
    /// `st_mode` when the archive was made on unix.
    pub unix_mode: Option<u32>,
}

fn u16_at(b: &[u8], o: usize) -> u64 {
    u16::from_le_bytes([b[o], b[o + 1]]) as u64
}
fn u32_at(b: &[u8], o: usize) -> u64 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as u64
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

/// Reads the central directory records of the zip file `f`.
pub fn central_directory(f: &mut File) -> Result<Vec<RawMember>> {
    let len = f.metadata()?.len();
    let tail_len = len.min(22 + 0xFFFF + 20);
    let mut tail = vec![0u8; tail_len as usize];
    f.seek(SeekFrom::Start(len - tail_len))?;
    f.read_exact(&mut tail)?;
    // The last end record whose comment reaches exactly to the end.
    let eocd = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&p| {
            tail[p..].starts_with(&[0x50, 0x4b, 5, 6])
                && p + 22 + u16_at(&tail, p + 20) as usize == tail.len()
        })
        .context("no end of central directory record: not a zip file, or one cut short")?;
    let (mut count, mut cd_size, mut cd_off) = (
        u16_at(&tail, eocd + 10),
        u32_at(&tail, eocd + 12),
        u32_at(&tail, eocd + 16),
    );
    if count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_off == 0xFFFF_FFFF {
        let loc = eocd
            .checked_sub(20)
            .filter(|&l| tail[l..].starts_with(&[0x50, 0x4b, 6, 7]))
            .context("corrupt zip: ZIP64 end record locator missing")?;
        let rec = u64_at(&tail, loc + 8);
        let mut z = [0u8; 56];
        if !matches!(rec.checked_add(56), Some(e) if e <= len) {
            bail!("corrupt zip: ZIP64 end record lies outside the file");
        }
        f.seek(SeekFrom::Start(rec))?;
        f.read_exact(&mut z)?;
        if !z.starts_with(&[0x50, 0x4b, 6, 6]) {
            bail!("corrupt zip: no ZIP64 end record where the locator points");
        }
        (count, cd_size, cd_off) = (u64_at(&z, 32), u64_at(&z, 40), u64_at(&z, 48));
    }
    if !matches!(cd_off.checked_add(cd_size), Some(e) if e <= len) || count > cd_size / 46 {
        bail!("corrupt zip: the central directory ({count} entries, {cd_size} bytes at {cd_off}) does not fit in the {len}-byte file");
    }
    f.seek(SeekFrom::Start(cd_off))?;
    let mut r = BufReader::new(f.take(cd_size));
    let mut out = Vec::with_capacity(count as usize);
    let mut h = [0u8; 46];
    for i in 0..count {
        r.read_exact(&mut h)
            .with_context(|| format!("corrupt zip: central directory entry {i} is truncated"))?;
        if !h.starts_with(&[0x50, 0x4b, 1, 2]) {
            bail!("corrupt zip: central directory entry {i} has a bad signature");
        }
        let (n, extra, comment) = (u16_at(&h, 28), u16_at(&h, 30), u16_at(&h, 32));
        let mut name = vec![0u8; n as usize];
        r.read_exact(&mut name)
            .with_context(|| format!("corrupt zip: central directory entry {i} is truncated"))?;
        std::io::copy(&mut (&mut r).take(extra + comment), &mut std::io::sink())?;
        let unix = h[5] == 3;
        out.push(RawMember {
            name: String::from_utf8_lossy(&name).into_owned(),
            unix_mode: unix.then(|| (u32_at(&h, 38) >> 16) as u32),
        });
    }
    Ok(out)
}

/// Checks every member name (see the module docs) and refuses symbolic
/// links, which pip would install as small files holding the link target.
pub fn validate(members: &[RawMember]) -> Result<()> {
    let mut set = wheel_format::MemberSet::new();
    for m in members {
        set.add(&m.name)?;
        if m.unix_mode.is_some_and(|mode| mode & 0o170000 == 0o120000) {
            bail!(
                "member {:?} is a symbolic link; pip installs it as a regular file holding \
                 the link's target path; store the file itself (or a copy) instead",
                m.name
            );
        }
    }
    Ok(())
}
