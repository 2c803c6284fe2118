//! The one way `rocm-wheel` writes an output file: the contents go into an
//! unnamed file in the target's directory, which gets the target's name
//! only when complete. A reader never sees a partial output, and a failed
//! or killed run leaves nothing behind.
//!
//! The unnamed file is `O_TMPFILE`: it has no directory entry until it is
//! linked, and the kernel frees it when its last descriptor closes, however
//! the process ends (an error, SIGTERM, SIGKILL, the OOM killer). A named
//! temporary file can only be removed by the process itself, so a kill
//! while writing (minutes, for a large wheel) used to leave it behind.
//! Commit links it into place through `/proc/self/fd` (`linkat` with
//! `AT_SYMLINK_FOLLOW`, which needs no privilege, unlike `AT_EMPTY_PATH` on
//! kernels before 6.10): straight to the target when the target does not
//! exist (the name appears with the whole contents), else to a fresh
//! hidden name that is then renamed over the target. Only a kill between
//! those two system calls can leave that hidden name.
//!
//! [`ScratchFile`] is the same unnamed file for work that never gets a name
//! (a wheel member unpacked to be edited next to the output): tools that
//! take a path reach it as `/proc/self/fd/<n>`, which opens the file again
//! from this process.
//!
//! Where the directory's filesystem has no `O_TMPFILE` (some network and
//! FUSE filesystems) or `/proc` is not mounted, the contents go into a
//! named temporary file (`.<name>.XXXXXX.tmp`) renamed over the target
//! instead: every error path removes it before the error is returned (no
//! error value owns it, so a caller that exits right after printing the
//! error still leaves nothing), but a killed run leaves it.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// An output file being written; see the crate docs.
pub struct AtomicFile {
    tmp: Temp,
    target: PathBuf,
}

enum Temp {
    /// `O_TMPFILE` in the target's directory.
    Unnamed { file: File, dir: PathBuf },
    /// The fallback.
    Named(tempfile::NamedTempFile),
}

impl AtomicFile {
    /// Starts writing `target`. Fails before creating anything if `target`
    /// is a directory or its directory does not exist.
    pub fn create(target: &Path) -> Result<AtomicFile> {
        if target.is_dir() {
            bail!(
                "{} is a directory; give the output as a file path (e.g. {})",
                target.display(),
                target.join("NAME").display()
            );
        }
        let dir = target_dir(target);
        let tmp = match open_unnamed(dir) {
            Some(file) => Temp::Unnamed {
                file,
                dir: dir.to_path_buf(),
            },
            None => Temp::Named(
                hidden(target, |b| b.tempfile_in(dir)).map_err(|e| cannot_create(dir, e))?,
            ),
        };
        Ok(AtomicFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The file being written, to write the contents into.
    pub fn file(&mut self) -> &mut File {
        match &mut self.tmp {
            Temp::Unnamed { file, .. } => file,
            Temp::Named(t) => t.as_file_mut(),
        }
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Sets the permission bits and moves the file into place. On error
    /// no temporary name is left.
    pub fn commit(self, mode: u32) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let AtomicFile { tmp, target } = self;
        let file = match &tmp {
            Temp::Unnamed { file, .. } => file,
            Temp::Named(t) => t.as_file(),
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("cannot set the permissions of {}", target.display()))?;
        let moved = match tmp {
            Temp::Unnamed { file, dir } => link_into_place(&file, &dir, &target),
            // The rename error owns the temporary file: drop (delete) it
            // here and keep only the I/O error.
            Temp::Named(t) => t.persist(&target).map(drop).map_err(|e| e.error),
        };
        moved.with_context(|| format!("cannot move the result to {}", target.display()))
    }

    /// Runs `f` on the file and commits with `mode` if it succeeds; on any
    /// error nothing is left.
    pub fn write_with(
        target: &Path,
        mode: u32,
        f: impl FnOnce(&mut File) -> Result<()>,
    ) -> Result<()> {
        let mut out = AtomicFile::create(target)?;
        f(out.file()).with_context(|| format!("cannot write {}", target.display()))?;
        out.commit(mode)
    }
}

/// A scratch file in a directory, deleted when dropped and, where the
/// filesystem allows, never named (see the crate docs): a killed run
/// leaves nothing.
pub struct ScratchFile {
    file: File,
    /// `/proc/self/fd/<n>`, or the fallback's name.
    path: PathBuf,
    /// The fallback's name, removed when dropped.
    _named: Option<tempfile::TempPath>,
}

impl ScratchFile {
    /// A new empty scratch file in `dir`.
    pub fn new_in(dir: &Path) -> Result<ScratchFile> {
        if let Some(file) = open_unnamed(dir) {
            let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
            return Ok(ScratchFile {
                file,
                path,
                _named: None,
            });
        }
        let (file, named) = tempfile::Builder::new()
            .prefix(".rocm-wheel.")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| cannot_create(dir, e))?
            .into_parts();
        Ok(ScratchFile {
            file,
            path: named.to_path_buf(),
            _named: Some(named),
        })
    }

    /// A path that opens the file from this process (not from another:
    /// `/proc/self` is the opener's).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn as_file(&self) -> &File {
        &self.file
    }

    pub fn as_file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// A new handle to the file, with its own offset (at the start).
    pub fn reopen(&self) -> io::Result<File> {
        File::open(&self.path)
    }

    /// The open file alone; the fallback's name is removed.
    pub fn into_file(self) -> File {
        self.file
    }
}

impl io::Read for ScratchFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

impl io::Write for ScratchFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl io::Seek for ScratchFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// Writes each `(target, content)` of `outputs` with permission bits
/// `mode`, all or none: every one is staged next to its target first, and
/// only then are they moved into place (a failure before that leaves no
/// output and no staged file).
pub fn write_all_or_none(outputs: Vec<(&Path, Box<dyn io::Read + '_>)>, mode: u32) -> Result<()> {
    let mut staged = Vec::new();
    for (target, mut content) in outputs {
        let mut f = AtomicFile::create(target)?;
        io::copy(&mut content, f.file())
            .with_context(|| format!("cannot write {}", target.display()))?;
        staged.push(f);
    }
    for f in staged {
        f.commit(mode)?;
    }
    Ok(())
}

/// The directory `target` is written in, its temporary file beside it: its
/// parent, or `.` for a bare file name.
pub fn target_dir(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `target`'s file name, for outputs whose name is part of their format (a
/// wheel's); an error for a path that names no file (`/`, `..`).
pub fn target_name(target: &Path) -> Result<String> {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "-o {}: the output path names no file; give the path of the file to write",
                target.display()
            )
        })
}

/// `p` as it will be named once written: canonical if it exists, else its
/// canonical directory joined with its name (`p` itself when neither
/// resolves). Two outputs, or an output and an input, are one file when
/// these are equal.
pub fn resolved_path(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (target_dir(p).canonicalize(), p.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => p.to_path_buf(),
    }
}

/// Writes `bytes` to `target` atomically with permission bits `mode`.
pub fn write_bytes(target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::io::Write;
    AtomicFile::write_with(target, mode, |f| Ok(f.write_all(bytes)?))
}

/// `f` given a builder of hidden names beside `target`:
/// `.<name>.XXXXXX.tmp`.
fn hidden<T>(target: &Path, f: impl FnOnce(&tempfile::Builder) -> T) -> T {
    let name = target_name(target).unwrap_or_default();
    let prefix = format!(".{name}.");
    f(tempfile::Builder::new().prefix(&prefix).suffix(".tmp"))
}

fn cannot_create(dir: &Path, e: io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot create a temporary file in {}: {e}; check that the directory exists and is writable",
        dir.display()
    )
}

/// An `O_TMPFILE` file in `dir`, or None where it cannot be made or later
/// linked (the caller falls back to a named file, which also reports the
/// errors a missing or read-only directory gives).
fn open_unnamed(dir: &Path) -> Option<File> {
    if !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)
        .ok()
}

/// Gives the unnamed `file` the name `target` (see the crate docs).
fn link_into_place(file: &File, dir: &Path, target: &Path) -> io::Result<()> {
    let proc = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let link = |to: &Path| -> io::Result<()> {
        let to = CString::new(to.as_os_str().as_bytes())?;
        // SAFETY: both paths are NUL-terminated strings that outlive the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    match link(target) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        done => return done,
    }
    // The target exists: a fresh hidden name, renamed over it (removed if
    // the rename fails).
    let named = hidden(target, |b| b.make_in(dir, |p| link(p)))?;
    named.persist(target).map(drop).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_all_or_none_and_one_name_per_file() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("missing/b"));
        let outputs: Vec<(&Path, Box<dyn io::Read>)> =
            vec![(&a, Box::new(&b"a"[..])), (&b, Box::new(&b"b"[..]))];
        assert!(write_all_or_none(outputs, 0o644).is_err());
        assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
        write_all_or_none(vec![(&a, Box::new(&b"a"[..]))], 0o644).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"a");
        // Existing or not, through `..` or not: one file, one name.
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let via = d.path().join("sub/../a");
        assert_eq!(resolved_path(&via), resolved_path(&a));
        let new = d.path().join("sub/../new");
        assert_eq!(resolved_path(&new), resolved_path(d.path()).join("new"));
        assert_ne!(resolved_path(&new), resolved_path(&a));
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_replaces() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out.bin");
        write_bytes(&t, b"one", 0o644).unwrap();
        write_bytes(&t, b"two", 0o755).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"two");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&t).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755);
        assert_eq!(entries(d.path()), ["out.bin"]);
        // A symbolic link as the target is replaced, not written through.
        std::fs::write(d.path().join("other"), b"kept").unwrap();
        std::fs::remove_file(&t).unwrap();
        std::os::unix::fs::symlink("other", &t).unwrap();
        write_bytes(&t, b"three", 0o644).unwrap();
        assert_eq!(std::fs::read(d.path().join("other")).unwrap(), b"kept");
        assert!(!std::fs::symlink_metadata(&t).unwrap().is_symlink());
        assert_eq!(std::fs::read(&t).unwrap(), b"three");
    }

    /// While it is written, the file has no name in the directory (the
    /// test directory's filesystem, tmpfs or ext4, has `O_TMPFILE`): there
    /// is nothing a kill could leave behind.
    #[test]
    fn an_output_being_written_has_no_name() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        for existing in [false, true] {
            let t = d.path().join("out.bin");
            if existing {
                std::fs::write(&t, b"old").unwrap();
            }
            let mut out = AtomicFile::create(&t).unwrap();
            assert!(matches!(out.tmp, Temp::Unnamed { .. }));
            out.file().write_all(b"new").unwrap();
            let before: Vec<String> = if existing {
                vec!["out.bin".into()]
            } else {
                vec![]
            };
            assert_eq!(entries(d.path()), before);
            out.commit(0o644).unwrap();
            assert_eq!(entries(d.path()), ["out.bin"]);
            assert_eq!(std::fs::read(&t).unwrap(), b"new");
            std::fs::remove_file(&t).unwrap();
        }
    }

    /// A scratch file has no name either, and its path opens it again (for
    /// tools taking a path) until it is dropped.
    #[test]
    fn a_scratch_file_has_no_name_and_a_path_that_opens_it() {
        use std::io::{Read, Seek, Write};
        let d = tempfile::tempdir().unwrap();
        let mut s = ScratchFile::new_in(d.path()).unwrap();
        s.as_file_mut().write_all(b"abc").unwrap();
        let mut again = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(s.path())
            .unwrap();
        again.write_all(b"x").unwrap();
        assert!(entries(d.path()).is_empty());
        let mut first = [0u8; 2];
        s.reopen().unwrap().read_exact(&mut first).unwrap();
        assert_eq!(&first, b"xb");
        let mut f = s.into_file();
        f.rewind().unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "xbc");
        let e = ScratchFile::new_in(&d.path().join("no")).err().unwrap();
        assert!(
            format!("{e:#}").contains("cannot create a temporary file in"),
            "{e:#}"
        );
    }

    #[test]
    fn a_directory_target_is_refused_without_a_temp_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let e = write_bytes(&d.path().join("sub"), b"x", 0o644).unwrap_err();
        assert!(format!("{e:#}").contains("is a directory"), "{e:#}");
        assert_eq!(entries(d.path()), ["sub"]);
        assert!(entries(&d.path().join("sub")).is_empty());
    }

    #[test]
    fn a_missing_directory_is_named() {
        let d = tempfile::tempdir().unwrap();
        let e = write_bytes(&d.path().join("no/out.bin"), b"x", 0o644).unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("cannot create a temporary file in"), "{e}");
        assert!(e.contains("check that the directory exists"), "{e}");
    }

    #[test]
    fn an_output_path_without_a_file_name_is_refused_as_the_option() {
        assert_eq!(target_name(Path::new("d/out.whl")).unwrap(), "out.whl");
        for p in ["/", "d/.."] {
            let e = format!("{:#}", target_name(Path::new(p)).unwrap_err());
            assert!(e.starts_with(&format!("-o {p}: ")), "{e}");
            assert!(e.contains("give the path of the file to write"), "{e}");
        }
    }

    #[test]
    fn failed_writes_and_renames_leave_nothing() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out.bin");
        let e = AtomicFile::write_with(&t, 0o644, |_| bail!("boom")).unwrap_err();
        assert!(format!("{e:#}").contains("boom"));
        assert!(entries(d.path()).is_empty());
        // The target turns into a non-empty directory after the file is
        // created: the move fails, and no hidden name is left.
        let out = AtomicFile::create(&t).unwrap();
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("keep"), b"").unwrap();
        let e = out.commit(0o644).unwrap_err();
        assert!(format!("{e:#}").contains("cannot move the result"), "{e:#}");
        assert_eq!(entries(d.path()), ["out.bin"]);
        assert_eq!(entries(&t), ["keep"]);
    }

    /// The named fallback keeps the same promises short of a kill.
    #[test]
    fn the_named_fallback_writes_and_cleans_up() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out.bin");
        let named = |t: &Path| AtomicFile {
            tmp: Temp::Named(hidden(t, |b| b.tempfile_in(d.path())).unwrap()),
            target: t.to_path_buf(),
        };
        let mut out = named(&t);
        out.file().write_all(b"one").unwrap();
        let during = entries(d.path());
        assert!(
            during.len() == 1 && during[0].starts_with(".out.bin.") && during[0].ends_with(".tmp"),
            "{during:?}"
        );
        out.commit(0o644).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"one");
        assert_eq!(entries(d.path()), ["out.bin"]);
        std::fs::remove_file(&t).unwrap();
        let out = named(&t);
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("keep"), b"").unwrap();
        assert!(out.commit(0o644).is_err());
        assert_eq!(entries(d.path()), ["out.bin"]);
    }
}
