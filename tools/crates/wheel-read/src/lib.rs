//! Reading a wheel, the one way every command does: open it once (its
//! member names checked as pip would: duplicates, symbolic links), read
//! its text members with a bound, and walk its members verifying each
//! against RECORD while reading it, an ELF member into a bounded-memory
//! image ([`elf_image`]). `check` and `inspect` walk it; `repair` walks it
//! and hands the same open archive to the wheel rewriter, which `thin`
//! opens through [`WheelReader`] too.

mod elf_image;
mod members;

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use wheel_format::{find_dist_info, DistInfoError, Expected, HashingReader, Record};

pub use elf_image::{elf_image, ImageOptions, Reopen, HEAD_CAP, KEEP_MAX, WHOLE_MAX};

/// The archive as the zip crate reads it.
pub type Archive = zip::ZipArchive<BufReader<File>>;

/// Why a file could not be opened as a wheel; each command words it its
/// own way.
#[derive(Debug)]
pub enum OpenError {
    /// The file cannot be opened.
    Open(std::io::Error),
    /// Not a zip archive (no readable central directory).
    NotZip(anyhow::Error),
    /// A zip archive whose member names a wheel cannot have.
    BadNames(anyhow::Error),
    /// A zip archive without exactly one `.dist-info`.
    NotWheel(DistInfoError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Open(e) => write!(f, "{e}"),
            OpenError::NotZip(e) | OpenError::BadNames(e) => write!(f, "{e:#}"),
            OpenError::NotWheel(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// An open wheel.
pub struct WheelReader {
    path: PathBuf,
    file_name: String,
    zip: Archive,
    names: Vec<String>,
    dist: String,
}

impl WheelReader {
    /// Opens `path`: a zip archive with valid member names and one
    /// `.dist-info`.
    pub fn open(path: &Path) -> std::result::Result<WheelReader, OpenError> {
        WheelReader::from_file(File::open(path).map_err(OpenError::Open)?, path)
    }

    /// [`Self::open`] on the file at `path`, already open (at any
    /// position).
    pub fn from_file(mut file: File, path: &Path) -> std::result::Result<WheelReader, OpenError> {
        let members = members::central_directory(&mut file).map_err(OpenError::NotZip)?;
        members::validate(&members).map_err(OpenError::BadNames)?;
        file.rewind().map_err(OpenError::Open)?;
        let zip = zip::ZipArchive::new(BufReader::new(file))
            .map_err(|e| OpenError::NotZip(anyhow!(e)))?;
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        let dist = find_dist_info(names.iter().map(String::as_str)).map_err(OpenError::NotWheel)?;
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(WheelReader {
            path: path.to_path_buf(),
            file_name,
            zip,
            names,
            dist,
        })
    }

    /// The wheel's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The wheel's file name.
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The members, in archive order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The `.dist-info` stem (`name-version`).
    pub fn dist(&self) -> &str {
        &self.dist
    }

    /// Reads a text member, refusing more than
    /// [`wheel_format::MAX_TEXT_MEMBER`] bytes (whatever its header claims)
    /// so a bomb cannot fill memory.
    pub fn read_text(&mut self, member: &str) -> Result<String> {
        read_text(&mut self.zip, member)
    }

    /// The wheel's file, from its start (to copy it as it is).
    pub fn into_file(self) -> std::io::Result<File> {
        let mut file = self.zip.into_inner().into_inner();
        file.rewind()?;
        Ok(file)
    }

    /// The archive, for the wheel rewriter, which copies members as their
    /// compressed bytes.
    pub fn into_archive(self) -> (String, Archive, Vec<String>, String) {
        (self.file_name, self.zip, self.names, self.dist)
    }

    /// Calls `f` with every member that is not a directory, in archive
    /// order, then checks that RECORD listed no member the wheel lacks.
    pub fn walk(
        &mut self,
        mut record: Record,
        mut f: impl FnMut(&mut Member<'_>) -> Result<()>,
    ) -> Result<()> {
        for (index, name) in self.names.iter().enumerate() {
            if name.ends_with('/') {
                continue;
            }
            let expected = record.expect(name)?;
            f(&mut Member {
                zip: &mut self.zip,
                index,
                name,
                expected,
            })?;
        }
        record.finish()
    }
}

/// Reads the text member `member` of `zip` (see [`WheelReader::read_text`]).
pub fn read_text<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, member: &str) -> Result<String> {
    let f = zip
        .by_name(member)
        .with_context(|| format!("not a valid wheel: {member} is missing"))?;
    wheel_format::read_text_member(member, f)
}

/// How [`Member::read`] reads a member, from its first bytes.
pub enum How {
    /// Only hashed.
    Hash,
    /// Kept whole, if shorter than this many bytes.
    Whole(u64),
    /// Read into a bounded-memory ELF image.
    Elf(ImageOptions),
}

/// What [`Member::read`] read.
pub enum Content {
    Hashed,
    Whole(Vec<u8>),
    /// A member [`How::Whole`] would have kept, at least as long as its
    /// bound (neither read further nor verified).
    TooLarge,
    Elf(Vec<u8>),
}

/// One member of a walk, with what RECORD expects of it.
pub struct Member<'z> {
    zip: &'z mut Archive,
    pub index: usize,
    pub name: &'z str,
    /// `None`: RECORD itself (and its signatures), which are not hashed.
    pub expected: Option<Expected>,
}

impl Member<'_> {
    /// The size the zip header records.
    pub fn size(&mut self) -> Result<u64> {
        Ok(self.zip.by_index_raw(self.index)?.size())
    }

    /// Reads the member to its end once at least (its first `head` bytes
    /// decide `how`), verifying it against RECORD; errors reading it get
    /// the context `ctx`, a RECORD mismatch does not. A member RECORD does
    /// not hash is not read.
    pub fn read(
        &mut self,
        head: usize,
        how: impl FnOnce(&[u8]) -> How,
        ctx: &dyn Fn() -> String,
    ) -> Result<Content> {
        let Some(expected) = self.expected.as_ref() else {
            return Ok(Content::Hashed);
        };
        let m = self.zip.by_index(self.index).with_context(ctx)?;
        let declared = m.size();
        let mut m = HashingReader::new(m);
        let mut data = Vec::new();
        (&mut m)
            .take(head as u64)
            .read_to_end(&mut data)
            .with_context(ctx)?;
        match how(&data) {
            How::Hash => {
                std::io::copy(&mut m, &mut std::io::sink()).with_context(ctx)?;
                expected.verify(m.complete_digest().expect("io::copy reads to the end"))?;
                Ok(Content::Hashed)
            }
            How::Whole(max) => {
                (&mut m)
                    .take(max)
                    .read_to_end(&mut data)
                    .with_context(ctx)?;
                if data.len() as u64 >= max {
                    return Ok(Content::TooLarge);
                }
                expected.verify(m.complete_digest().expect("read to the end"))?;
                Ok(Content::Whole(data))
            }
            How::Elf(opts) => {
                drop(m);
                let (zip, i) = (&mut *self.zip, self.index);
                // The digest of the first complete read of the member.
                let mut digest = None;
                let mut reopen = |f: &mut dyn FnMut(&mut dyn Read) -> Result<()>| -> Result<()> {
                    let mut e = HashingReader::new(zip.by_index(i)?);
                    f(&mut e)?;
                    if digest.is_none() {
                        digest = e.complete_digest().cloned();
                    }
                    Ok(())
                };
                let image = elf_image::elf_image(&mut reopen, declared, &opts).with_context(ctx)?;
                let Some(digest) = digest else {
                    bail!(
                        "internal error: wheel member {} was never read to the end",
                        self.name
                    );
                };
                expected.verify(&digest)?;
                Ok(Content::Elf(image))
            }
        }
    }
}
