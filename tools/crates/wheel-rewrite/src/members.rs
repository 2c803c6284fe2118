//! One member of the output: its new content, written whole or spliced
//! into the input member's deflate stream, or described as the input's
//! central directory describes it (for a raw copy).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};

use anyhow::{bail, Context, Result};
use parallel_zip::{dos_datetime, DeflateMap, ParallelZipWriter, RawEntry};
use wheel_format::{read_text_member, record_hash};
use wheel_read::Archive;

/// The new content of a member.
pub enum Source {
    Bytes(Vec<u8>),
    /// A file read from its start to its end when the wheel is written.
    File(File),
}

/// Deflates `src` as the member `e.name`, with `e`'s time and mode;
/// returns its RECORD hash and size.
pub(crate) fn write_source<W: Write + Seek>(
    w: &mut ParallelZipWriter<W>,
    e: &RawEntry,
    src: Source,
) -> Result<(String, u64)> {
    let mode = e.mode & 0o7777;
    let written = match src {
        Source::Bytes(b) => w.add_reader_dated(&e.name, &b[..], b.len() as u64, mode, e.dos)?,
        Source::File(mut f) => {
            let size = f.seek(SeekFrom::End(0))?;
            f.seek(SeekFrom::Start(0))?;
            let r = BufReader::with_capacity(1 << 20, f);
            w.add_reader_dated(&e.name, r, size, mode, e.dos)?
        }
    };
    Ok((record_hash(&written.sha256), written.size))
}

/// Writes `file`, an edited copy of the input member `raw` (mapped by
/// `map`), reusing `raw`'s deflate stream outside the bytes `changed`;
/// returns its RECORD hash and size.
pub(crate) fn write_spliced<W: Write + Seek>(
    w: &mut ParallelZipWriter<W>,
    e: &RawEntry,
    mut raw: impl Read,
    map: &DeflateMap,
    changed: std::ops::Range<u64>,
    mut file: File,
) -> Result<(String, u64)> {
    file.seek(SeekFrom::Start(0))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let written = w.add_spliced(e, &mut raw, map, changed, &mut r)?;
    Ok((record_hash(&written.sha256), written.size))
}

/// What the input's central directory says about member `i`, under the
/// name `name`.
pub(crate) fn raw_entry(zip: &mut Archive, i: usize, name: String) -> Result<RawEntry> {
    raw_entry_of(&zip.by_index_raw(i)?, name)
}

pub(crate) fn raw_entry_of(
    m: &zip::read::ZipFile<'_, BufReader<File>>,
    name: String,
) -> Result<RawEntry> {
    if m.encrypted() {
        bail!("{}: encrypted members are not allowed in a wheel", m.name());
    }
    #[allow(deprecated)]
    let method = match m.compression() {
        zip::CompressionMethod::Stored => 0,
        zip::CompressionMethod::Deflated => 8,
        other => bail!(
            "{}: compression method {other} is not stored or deflate, the methods a wheel may use",
            m.name()
        ),
    };
    Ok(RawEntry {
        name,
        method,
        crc: m.crc32(),
        compressed_size: m.compressed_size(),
        size: m.size(),
        mode: m.unix_mode().unwrap_or(0o644),
        dos: m
            .last_modified()
            .map_or(dos_datetime(None), |t| (t.timepart(), t.datepart())),
    })
}

pub(crate) fn source_text(member: &str, src: Source) -> Result<String> {
    match src {
        Source::Bytes(b) => String::from_utf8(b).with_context(|| format!("{member} is not UTF-8")),
        Source::File(mut f) => {
            f.seek(SeekFrom::Start(0))?;
            read_text_member(member, f)
        }
    }
}
