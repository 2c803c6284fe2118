//! Rewriting an existing wheel (as auditwheel's `wheeltools` does for
//! `repair`): open it, replace, add or remove members, rename the
//! distribution, retag, and [`WheelRewriter::finish`].
//!
//! Members nobody changed are copied as their compressed bytes (never
//! inflated), with their time and permissions; changed and added ones are
//! deflated by [`ParallelZipWriter`] (large ones in parallel). RECORD keeps
//! the rows of unchanged members as written, gets new hashes for what
//! changed and is written last. The output appears atomically or not at
//! all.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use tempfile::NamedTempFile;
use wheel_format::{
    dist_info_path, dist_info_stem, normalize_name, parse_tags, read_text_member, record_hash,
    rename_metadata, retag_wheel_file, rewrite_record, validate_member_name, validate_name,
    wheel_identity, RecordEdits, RecordRow, WheelName,
};
use wheel_read::{read_text, Archive, OpenError, WheelReader};

use crate::deflate_map::{inflate_mapped, DeflateMap};
use crate::parallel_zip::{dos_datetime, ParallelZipWriter, RawEntry};

/// The new content of a member.
pub enum Source {
    Bytes(Vec<u8>),
    /// A file read from its start to its end when the wheel is written.
    File(File),
}

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

    /// Inflates member `i` into a named temporary file in `dir` (named, so
    /// that tools taking a path, such as elf-edit, can edit it; deleted when
    /// dropped) to edit and [`Self::replace`] or [`Self::replace_unpacked`]
    /// it, if its content starts with `magic`; `None`, having inflated no
    /// more than `magic`'s length, if not. A deflated member's block
    /// boundaries are noted on the way, for [`Self::replace_unpacked`].
    pub fn unpack_if(
        &mut self,
        i: usize,
        magic: &[u8],
        dir: &Path,
    ) -> Result<Option<NamedTempFile>> {
        let mut m = self.zip.by_index(i)?;
        let mut head = Vec::new();
        (&mut m).take(magic.len() as u64).read_to_end(&mut head)?;
        if head != magic {
            return Ok(None);
        }
        let deflated = m.compression() == zip::CompressionMethod::Deflated;
        let mut file = NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
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
    pub fn unpack(&mut self, member: &str, dir: &Path) -> Result<NamedTempFile> {
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
        file: NamedTempFile,
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
                let e = RawEntry::to_deflate(name, mode);
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

/// Deflates `src` as the member `e.name`, with `e`'s time and mode;
/// returns its RECORD hash and size.
fn write_source<W: Write + Seek>(
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
fn write_spliced<W: Write + Seek>(
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
fn raw_entry(zip: &mut Archive, i: usize, name: String) -> Result<RawEntry> {
    raw_entry_of(&zip.by_index_raw(i)?, name)
}

fn raw_entry_of(m: &zip::read::ZipFile<'_, BufReader<File>>, name: String) -> Result<RawEntry> {
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

fn source_text(member: &str, src: Source) -> Result<String> {
    match src {
        Source::Bytes(b) => String::from_utf8(b).with_context(|| format!("{member} is not UTF-8")),
        Source::File(mut f) => {
            f.seek(SeekFrom::Start(0))?;
            read_text_member(member, f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::path::PathBuf;
    use wheel_format::RecordWriter;

    const DIST: &str = "demo-1.0.dist-info";

    /// A wheel with two modules, a data file and RECORD rows as `rows`
    /// gives them (a needlessly quoted row included).
    fn wheel(dir: &Path, record_rows: Option<&str>) -> PathBuf {
        let p = dir.join("demo-1.0-py3-none-any.whl");
        let mut w = ParallelZipWriter::new(File::create(&p).unwrap(), Some(1_700_000_000), 6);
        let mut rec = RecordWriter::new();
        let files: [(&str, &[u8]); 5] = [
            ("demo/a.py", b"A = 1\n"),
            ("demo/b.py", b"B = 2\n"),
            ("demo/data.bin", &[7u8; 5000]),
            (
                "demo-1.0.dist-info/METADATA",
                b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nbody\n",
            ),
            (
                "demo-1.0.dist-info/WHEEL",
                b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            ),
        ];
        for (n, b) in files {
            let mode = if n.ends_with(".bin") { 0o755 } else { 0o644 };
            let x = w.add_bytes(n, b, mode).unwrap();
            rec.hashed(n, &record_hash(&x.sha256), x.size);
        }
        rec.unhashed(&format!("{DIST}/RECORD"));
        let text = rec.finish().replace("demo/b.py,", "\"demo/b.py\",");
        let text = record_rows.unwrap_or(&text);
        w.add_bytes(&format!("{DIST}/RECORD"), text.as_bytes(), 0o644)
            .unwrap();
        w.finish().unwrap();
        p
    }

    fn read(p: &Path) -> zip::ZipArchive<File> {
        zip::ZipArchive::new(File::open(p).unwrap()).unwrap()
    }

    fn text(z: &mut zip::ZipArchive<File>, n: &str) -> String {
        let mut s = String::new();
        z.by_name(n).unwrap().read_to_string(&mut s).unwrap();
        s
    }

    fn raw(z: &mut zip::ZipArchive<File>, n: &str) -> Vec<u8> {
        let mut v = Vec::new();
        let i = z.index_for_name(n).unwrap();
        z.by_index_raw(i).unwrap().read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn replace_add_remove_keep_the_other_members_and_rows() {
        let dir = tempfile::tempdir().unwrap();
        let input = wheel(dir.path(), None);
        let mut rw = WheelRewriter::open(&input).unwrap();
        rw.set_jobs(2);
        rw.replace("demo/a.py", Source::Bytes(b"A = 3\n".to_vec()))
            .unwrap();
        rw.remove("demo/b.py").unwrap();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"new\n").unwrap();
        rw.add("demo/new.txt", Source::File(f), 0o600).unwrap();
        assert!(rw
            .add("demo/data.bin", Source::Bytes(vec![]), 0o644)
            .is_err());
        assert!(rw.remove(&format!("{DIST}/RECORD")).is_err());
        assert!(rw.replace("nope", Source::Bytes(vec![])).is_err());
        let out = dir.path().join("out/demo-1.0-py3-none-any.whl");
        std::fs::create_dir(dir.path().join("out")).unwrap();
        assert_eq!(rw.output_file_name().unwrap(), "demo-1.0-py3-none-any.whl");
        rw.finish(&out).unwrap();

        let (mut a, mut b) = (read(&input), read(&out));
        let names: Vec<&str> = b.file_names().collect();
        assert_eq!(names.len(), 6);
        assert_eq!(text(&mut b, "demo/a.py"), "A = 3\n");
        assert_eq!(text(&mut b, "demo/new.txt"), "new\n");
        assert!(b.by_name("demo/b.py").is_err());
        // Unchanged members: the same compressed bytes, time and mode.
        assert_eq!(raw(&mut a, "demo/data.bin"), raw(&mut b, "demo/data.bin"));
        let (x, y) = (
            a.by_name("demo/data.bin").unwrap(),
            b.by_name("demo/data.bin").unwrap(),
        );
        assert_eq!(x.last_modified(), y.last_modified());
        assert_eq!(y.unix_mode(), Some(0o100755));
        drop((x, y));
        assert_eq!(
            b.by_name("demo/new.txt").unwrap().unix_mode(),
            Some(0o100600)
        );
        let record = text(&mut b, &format!("{DIST}/RECORD"));
        let old = text(&mut a, &format!("{DIST}/RECORD"));
        let lines: Vec<&str> = record.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "demo/a.py,{},6",
                record_hash(&<[u8; 32]>::from(<sha2::Sha256 as sha2::Digest>::digest(
                    b"A = 3\n"
                )))
            )
        );
        for kept in [1, 2, 3] {
            assert!(old.lines().any(|l| l == lines[kept]), "{}", lines[kept]);
        }
        assert!(lines[4].starts_with("demo/new.txt,sha256="), "{record}");
        assert_eq!(lines[5], format!("{DIST}/RECORD,,"));
        assert!(!record.contains("b.py"));
        // Unpacking: only members that start with the magic.
        let mut rw = WheelRewriter::open(&out).unwrap();
        let i = rw
            .names()
            .iter()
            .position(|n| n == "demo/data.bin")
            .unwrap();
        let mut f = rw.unpack_if(i, &[7, 7], dir.path()).unwrap().unwrap();
        let mut v = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        assert_eq!(v, [7u8; 5000]);
        assert!(rw.unpack_if(i, b"\x7fELF", dir.path()).unwrap().is_none());
        // The last member is RECORD.
        assert_eq!(b.by_index(5).unwrap().name(), format!("{DIST}/RECORD"));
    }

    #[test]
    fn an_unpacked_member_edited_in_place_reuses_its_stream_around_the_edit() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("demo-1.0-py3-none-any.whl");
        let lib = crate::parallel_zip::tests::sample(3 << 20);
        {
            // One zlib stream for the library, as another tool writes it.
            let mut w = ParallelZipWriter::new(File::create(&input).unwrap(), None, 6);
            let mut rec = RecordWriter::new();
            let meta: &[u8] = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n";
            let wheel: &[u8] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n";
            for (n, b) in [
                ("demo/lib.so", &lib[..]),
                ("demo-1.0.dist-info/METADATA", meta),
                ("demo-1.0.dist-info/WHEEL", wheel),
            ] {
                let x = w.add_bytes(n, b, 0o755).unwrap();
                rec.hashed(n, &record_hash(&x.sha256), x.size);
            }
            rec.unhashed(&format!("{DIST}/RECORD"));
            w.add_bytes(&format!("{DIST}/RECORD"), rec.finish().as_bytes(), 0o644)
                .unwrap();
            w.finish().unwrap();
        }
        let mut rw = WheelRewriter::open(&input).unwrap();
        let mut f = rw.unpack_if(0, &lib[..4], dir.path()).unwrap().unwrap();
        let edit = 1_500_000..1_500_100u64;
        let mut new = lib.clone();
        new[edit.start as usize..edit.end as usize].fill(0);
        f.seek(SeekFrom::Start(edit.start)).unwrap();
        f.write_all(&new[edit.start as usize..edit.end as usize])
            .unwrap();
        rw.replace_unpacked("demo/lib.so", f, edit).unwrap();
        let out = dir.path().join("out").join("demo-1.0-py3-none-any.whl");
        std::fs::create_dir(out.parent().unwrap()).unwrap();
        rw.finish(&out).unwrap();
        let mut z = read(&out);
        let mut back = Vec::new();
        z.by_name("demo/lib.so")
            .unwrap()
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == new, "the edited member differs");
        assert_eq!(
            z.by_name("demo/lib.so").unwrap().unix_mode(),
            Some(0o100755)
        );
        let row = format!(
            "demo/lib.so,{},{}",
            record_hash(&<[u8; 32]>::from(Sha256::digest(&new))),
            new.len()
        );
        assert!(text(&mut z, &format!("{DIST}/RECORD")).contains(&row));
        // The stream before the edit is the input's, byte for byte.
        let (old, now) = (
            raw(&mut read(&input), "demo/lib.so"),
            raw(&mut z, "demo/lib.so"),
        );
        let same = old.iter().zip(&now).take_while(|(a, b)| a == b).count();
        assert!(same > 300_000, "only {same} bytes of the old stream reused");
    }

    #[test]
    fn rename_and_retag() {
        let dir = tempfile::tempdir().unwrap();
        let input = wheel(dir.path(), None);
        let mut rw = WheelRewriter::open(&input).unwrap();
        rw.rename("Demo.GPU").unwrap();
        rw.retag(&["py3-none-manylinux_2_28_x86_64".to_string()])
            .unwrap();
        assert!(rw.rename("bad name!").is_err());
        let name = rw.output_file_name().unwrap();
        assert_eq!(name, "demo_gpu-1.0-py3-none-manylinux_2_28_x86_64.whl");
        let out = dir.path().join(&name);
        rw.finish(&out).unwrap();
        let mut b = read(&out);
        let d = "demo_gpu-1.0.dist-info";
        assert!(text(&mut b, &format!("{d}/METADATA")).contains("\nName: Demo.GPU\n"));
        let wheel = text(&mut b, &format!("{d}/WHEEL"));
        assert!(
            wheel.ends_with("Tag: py3-none-manylinux_2_28_x86_64\n"),
            "{wheel}"
        );
        let record = text(&mut b, &format!("{d}/RECORD"));
        assert!(record.contains(&format!("{d}/WHEEL,sha256=")), "{record}");
        assert!(!record.contains(DIST), "{record}");
        // What `wheel` and pip check: every member hashed as RECORD says.
        let mut rec = wheel_format::Record::parse(&format!("{d}/RECORD"), &record).unwrap();
        for i in 0..b.len() {
            let mut m = b.by_index(i).unwrap();
            let n = m.name().to_string();
            let mut v = Vec::new();
            m.read_to_end(&mut v).unwrap();
            if let Some(e) = rec.expect(&n).unwrap() {
                e.verify(&wheel_format::Digest::of(&v)).unwrap();
            }
        }
        rec.finish().unwrap();
    }

    #[test]
    fn a_failed_finish_leaves_no_output() {
        let dir = tempfile::tempdir().unwrap();
        // RECORD does not list demo/a.py, which is replaced: refused.
        let input = wheel(dir.path(), Some("demo/b.py,sha256=x,1\n"));
        let mut rw = WheelRewriter::open(&input).unwrap();
        rw.replace("demo/a.py", Source::Bytes(b"x".to_vec()))
            .unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let out = dir.path().join("out/demo-1.0-py3-none-any.whl");
        let e = format!("{:#}", rw.finish(&out).unwrap_err());
        assert!(e.contains("does not list every member"), "{e}");
        assert_eq!(
            std::fs::read_dir(dir.path().join("out")).unwrap().count(),
            0
        );
    }
}
