//! [`WheelRewriter`]: the open wheel, the edits asked for, and writing the
//! result.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use atomic_write::ScratchFile;
use parallel_zip::{inflate_mapped, DeflateMap, ParallelZipWriter, RawEntry};
use wheel_format::{
    dist_info_path, dist_info_stem, normalize_name, parse_tags, rename_metadata, retag_wheel_file,
    rewrite_record, validate_member_name, validate_name, wheel_identity, RecordEdits, RecordRow,
    WheelName,
};
use wheel_read::{read_text, Archive, OpenError, WheelReader};

use crate::members::{raw_entry, raw_entry_of, source_text, write_source, write_spliced, Source};

enum Edit {
    Replace(Source),
    /// A member unpacked by [`WheelRewriter::unpack_if`] and edited in
    /// these bytes only.
    Splice(File, std::ops::Range<u64>),
    Remove,
}

/// An open wheel and the changes to make to it.
pub struct WheelRewriter {
    file_name: String,
    zip: Archive,
    names: Vec<String>,
    /// The input's `.dist-info` stem, and its distribution's name and
    /// version (from METADATA).
    dist: String,
    name: String,
    version: String,
    metadata: String,
    rename: Option<String>,
    /// New `Tag` lines and the file-name tag triple.
    tags: Option<(Vec<String>, String)>,
    edits: BTreeMap<String, Edit>,
    added: Vec<(String, Source, u32)>,
    jobs: usize,
    /// Deflate block maps of the members [`Self::unpack_if`] inflated.
    maps: HashMap<usize, DeflateMap>,
}

impl WheelRewriter {
    /// Opens `path`: a zip archive with one `.dist-info` whose METADATA
    /// agrees with the file name.
    pub fn open(path: &Path) -> Result<WheelRewriter> {
        let shown = path.display();
        let wheel = WheelReader::open(path).map_err(|e| match e {
            OpenError::Open(e) => anyhow::Error::new(e).context(format!("cannot open {shown}")),
            OpenError::NotZip(e) => e.context(format!("{shown}: not a zip archive")),
            OpenError::BadNames(e) => e.context(format!("{shown} is not a valid wheel")),
            OpenError::NotWheel(e) => anyhow::Error::new(e),
        })?;
        WheelRewriter::new(wheel)
    }

    /// Takes over the open wheel `wheel`.
    pub fn new(wheel: WheelReader) -> Result<WheelRewriter> {
        let (file_name, mut zip, names, dist) = wheel.into_archive();
        let metadata = read_text(&mut zip, &dist_info_path(&dist, "METADATA"))?;
        let (name, version) = wheel_identity(&file_name, &dist, &metadata)?;
        Ok(WheelRewriter {
            file_name,
            zip,
            names,
            dist,
            name,
            version,
            metadata,
            rename: None,
            tags: None,
            edits: BTreeMap::new(),
            added: Vec::new(),
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            maps: HashMap::new(),
        })
    }

    /// The input's members, in archive order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The text member `member` (bounded, as every reader reads text
    /// members).
    pub fn read_text(&mut self, member: &str) -> Result<String> {
        read_text(&mut self.zip, member)
    }

    /// The input's file name.
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The input's METADATA, as read when it was opened, and its member name.
    pub fn metadata(&self) -> (&str, String) {
        (&self.metadata, dist_info_path(&self.dist, "METADATA"))
    }

    /// The distribution's version, as its METADATA writes it.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Inflates member `i` into a scratch file in `dir` (unnamed, so a
    /// killed run leaves nothing; its path serves tools taking one, such as
    /// elf-edit; deleted when dropped) to edit and [`Self::replace`] or [`Self::replace_unpacked`]
    /// it, if its content starts with `magic`; `None`, having inflated no
    /// more than `magic`'s length, if not. A deflated member's block
    /// boundaries are noted on the way, for [`Self::replace_unpacked`].
    pub fn unpack_if(&mut self, i: usize, magic: &[u8], dir: &Path) -> Result<Option<ScratchFile>> {
        let mut m = self.zip.by_index(i)?;
        let mut head = Vec::new();
        (&mut m).take(magic.len() as u64).read_to_end(&mut head)?;
        if head != magic {
            return Ok(None);
        }
        let deflated = m.compression() == zip::CompressionMethod::Deflated;
        let mut file = ScratchFile::new_in(dir)?;
        let mut w = BufWriter::with_capacity(1 << 20, file.as_file_mut());
        if deflated {
            drop(m);
            let mut raw = self.zip.by_index_raw(i)?;
            let name = raw.name().to_string();
            let map = inflate_mapped(&mut raw, &mut w)
                .with_context(|| format!("cannot unpack {name}"))?;
            if map.crc != raw.crc32() || map.size != raw.size() {
                bail!(
                    "{name}: inflates to {} bytes with CRC {:08x}, the archive says {} bytes \
                     with CRC {:08x}; the wheel is corrupt",
                    map.size,
                    map.crc,
                    raw.size(),
                    raw.crc32()
                );
            }
            self.maps.insert(i, map);
        } else {
            w.write_all(&head)?;
            std::io::copy(&mut m, &mut w).with_context(|| format!("cannot unpack {}", m.name()))?;
        }
        w.flush()?;
        drop(w);
        Ok(Some(file))
    }

    /// Member `member` unpacked (see [`Self::unpack_if`]).
    pub fn unpack(&mut self, member: &str, dir: &Path) -> Result<ScratchFile> {
        let i = (self.names.iter().position(|n| n == member))
            .with_context(|| format!("{}: no member {member}", self.file_name))?;
        Ok(self
            .unpack_if(i, b"", dir)?
            .expect("every member starts with no bytes"))
    }

    /// Gives the member `member`, unpacked by [`Self::unpack_if`] into
    /// `file`, the content `file` has now, which differs from the original
    /// only in the bytes `changed` (same size): the parts of its deflate
    /// stream before and well after them are reused as they are
    /// ([`ParallelZipWriter::add_spliced`]).
    pub fn replace_unpacked(
        &mut self,
        member: &str,
        file: ScratchFile,
        changed: std::ops::Range<u64>,
    ) -> Result<()> {
        self.check_member(member)?;
        // Open files outlive their names: the file is read at `finish`.
        let file = file.into_file();
        let mapped = (self.names.iter().position(|n| n == member))
            .is_some_and(|i| self.maps.contains_key(&i));
        let edit = if mapped {
            Edit::Splice(file, changed)
        } else {
            Edit::Replace(Source::File(file))
        };
        self.edits.insert(member.to_string(), edit);
        Ok(())
    }

    /// The distribution's name as METADATA spells it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Threads that deflate large members (default: every core).
    pub fn set_jobs(&mut self, jobs: usize) {
        self.jobs = jobs.max(1);
    }

    fn check_member(&self, member: &str) -> Result<()> {
        if !self.names.iter().any(|n| n == member) {
            bail!("{}: no member {member}", self.file_name);
        }
        if member == dist_info_path(&self.dist, "RECORD") {
            bail!("{member} is rewritten from the other members; it cannot be replaced or removed");
        }
        Ok(())
    }

    /// Gives the member `member` new content (keeping its time and
    /// permissions).
    pub fn replace(&mut self, member: &str, content: Source) -> Result<()> {
        self.check_member(member)?;
        self.edits
            .insert(member.to_string(), Edit::Replace(content));
        Ok(())
    }

    /// Drops the member `member`.
    pub fn remove(&mut self, member: &str) -> Result<()> {
        self.check_member(member)?;
        for file in ["METADATA", "WHEEL"] {
            if member == dist_info_path(&self.dist, file) {
                bail!("{member} cannot be removed: every wheel has one");
            }
        }
        self.edits.insert(member.to_string(), Edit::Remove);
        Ok(())
    }

    /// Adds a member `member` (a path inside the wheel, not in the
    /// `.dist-info`) with permissions `mode`.
    pub fn add(&mut self, member: &str, content: Source, mode: u32) -> Result<()> {
        validate_member_name(member)?;
        let taken = self.added.iter().any(|(n, _, _)| n == member)
            || (self.names.iter().any(|n| n == member)
                && !matches!(self.edits.get(member), Some(Edit::Remove)));
        if taken || member.starts_with(&format!("{}.dist-info/", self.dist)) {
            bail!("cannot add {member}: the wheel has it already or it is in the .dist-info");
        }
        self.added.push((member.to_string(), content, mode));
        Ok(())
    }

    /// Adds the file `file` to the `.dist-info` directory (`variant.json`):
    /// a name the wheel does not have yet, and none of the files every
    /// wheel has and this type writes itself (METADATA, WHEEL, RECORD).
    pub fn add_dist_info(&mut self, file: &str, content: Source) -> Result<()> {
        let member = dist_info_path(&self.dist, file);
        validate_member_name(&member)?;
        let taken = self.added.iter().any(|(n, _, _)| *n == member)
            || (self.names.contains(&member)
                && !matches!(self.edits.get(&member), Some(Edit::Remove)));
        if taken || file.contains('/') || ["METADATA", "WHEEL", "RECORD"].contains(&file) {
            bail!("cannot add {member}: the wheel has it already, or it is not a file of its own");
        }
        self.added.push((member, content, 0o644));
        Ok(())
    }

    /// Renames the distribution to `new_name`: METADATA's Name, the
    /// `.dist-info` directory, the file name.
    pub fn rename(&mut self, new_name: &str) -> Result<()> {
        validate_name(new_name)?;
        self.rename = Some(new_name.to_string());
        Ok(())
    }

    /// Sets the wheel's tags (WHEEL's `Tag` lines and the file name), e.g.
    /// `["py3-none-manylinux_2_28_x86_64"]`.
    pub fn retag(&mut self, tags: &[String]) -> Result<()> {
        let (expanded, file_tag) = parse_tags(tags)?;
        let lines = expanded.iter().map(|t| t.to_string()).collect();
        self.tags = Some((lines, file_tag));
        Ok(())
    }

    /// The `.dist-info` stem of the output.
    fn new_dist(&self) -> String {
        match &self.rename {
            Some(n) => dist_info_stem(n, &self.version),
            None => self.dist.clone(),
        }
    }

    /// The output's file name: the input's unless renamed or retagged.
    pub fn output_file_name(&self) -> Result<String> {
        if self.rename.is_none() && self.tags.is_none() {
            return Ok(self.file_name.clone());
        }
        let name = self.rename.as_deref().map(normalize_name);
        let parsed = WheelName::parse(&self.file_name)?;
        let mut out = WheelName {
            name: name.as_deref().unwrap_or(parsed.name),
            ..parsed
        };
        if let Some((_, file_tag)) = &self.tags {
            let mut t = file_tag.splitn(3, '-');
            (out.python, out.abi, out.platform) = (
                t.next().unwrap_or_default(),
                t.next().unwrap_or_default(),
                t.next().unwrap_or_default(),
            );
        }
        Ok(out.to_string())
    }

    /// METADATA renamed and WHEEL retagged, as replacements.
    fn apply_rename_and_tags(&mut self) -> Result<()> {
        if let Some(new_name) = &self.rename {
            let member = dist_info_path(&self.dist, "METADATA");
            let text = match self.edits.remove(&member) {
                Some(Edit::Replace(s)) => source_text(&member, s)?,
                Some(Edit::Splice(f, _)) => source_text(&member, Source::File(f))?,
                _ => self.metadata.clone(),
            };
            let text = rename_metadata(&text, new_name)?;
            self.edits
                .insert(member, Edit::Replace(Source::Bytes(text.into())));
        }
        if let Some((tags, _)) = &self.tags {
            let member = dist_info_path(&self.dist, "WHEEL");
            let text = match self.edits.remove(&member) {
                Some(Edit::Replace(s)) => source_text(&member, s)?,
                Some(Edit::Splice(f, _)) => source_text(&member, Source::File(f))?,
                _ => read_text(&mut self.zip, &member)?,
            };
            let text = retag_wheel_file(&text, tags);
            self.edits
                .insert(member, Edit::Replace(Source::Bytes(text.into())));
        }
        Ok(())
    }

    /// Writes the rewritten wheel to `output` (atomically): members in the
    /// input's order, added ones after them, RECORD last.
    pub fn finish(mut self, output: &Path) -> Result<()> {
        self.apply_rename_and_tags()?;
        let record_name = dist_info_path(&self.dist, "RECORD");
        let record_text = read_text(&mut self.zip, &record_name)?;
        let record_index = self.names.iter().position(|n| *n == record_name);
        let record_index = record_index.context("RECORD is missing")?;
        let (dist, new_dist) = (format!("{}.dist-info/", self.dist), self.new_dist());
        let rename = |n: &str| match n.strip_prefix(&dist) {
            Some(rest) if self.rename.is_some() => format!("{new_dist}.dist-info/{rest}"),
            _ => n.to_string(),
        };
        let names = std::mem::take(&mut self.names);
        let mut edits = std::mem::take(&mut self.edits);
        let removed: BTreeSet<String> = (edits.iter())
            .filter(|(_, e)| matches!(e, Edit::Remove))
            .map(|(n, _)| n.clone())
            .collect();
        let (zip, jobs, added, maps) = (&mut self.zip, self.jobs, &mut self.added, &self.maps);
        atomic_write::AtomicFile::write_with(output, 0o644, |out| {
            let mut w = ParallelZipWriter::new(BufWriter::new(out), None, 6);
            w.set_jobs(jobs);
            let mut changed = BTreeMap::new();
            for (i, name) in names.iter().enumerate() {
                let new_name = rename(name);
                match edits.remove(name) {
                    _ if i == record_index => {}
                    Some(Edit::Remove) => {}
                    Some(Edit::Replace(src)) => {
                        let e = raw_entry(zip, i, new_name.clone())?;
                        changed.insert(new_name, write_source(&mut w, &e, src)?);
                    }
                    Some(Edit::Splice(file, range)) => {
                        let e = raw_entry(zip, i, new_name.clone())?;
                        let map = &maps[&i];
                        let raw = zip.by_index_raw(i)?;
                        changed.insert(new_name, write_spliced(&mut w, &e, raw, map, range, file)?);
                    }
                    None => {
                        let m = zip.by_index_raw(i)?;
                        w.add_raw(&raw_entry_of(&m, new_name)?, m)?;
                    }
                }
            }
            let mut added_rows = Vec::new();
            for (name, src, mode) in std::mem::take(added) {
                // A `.dist-info` file follows a renamed distribution.
                let e = RawEntry::to_deflate(rename(&name), mode);
                let (hash, size) = write_source(&mut w, &e, src)?;
                added_rows.push(RecordRow {
                    path: e.name,
                    hash: Some(hash),
                    size: Some(size),
                });
            }
            let record = rewrite_record(
                &record_name,
                &record_text,
                &RecordEdits {
                    rename: &rename,
                    changed: &changed,
                    removed: &removed,
                    added: &added_rows,
                },
            )?;
            let e = raw_entry(zip, record_index, rename(&record_name))?;
            write_source(&mut w, &e, Source::Bytes(record.into_bytes()))?;
            w.finish()?.flush()?;
            Ok(())
        })
    }
}
