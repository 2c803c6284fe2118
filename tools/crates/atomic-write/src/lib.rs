//! The one way `rocm-wheel` writes an output file: into a temporary file in
//! the target's directory, renamed over the target only when complete.
//!
//! Every error path removes the temporary file before the error is
//! returned, so no error value owns it: a caller that ends the process
//! right after printing the error (skipping destructors) still leaves
//! nothing behind.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// An output file being written; see the crate docs.
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
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
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot create a temporary file in {}: {e}; check that the directory exists and is writable",
                    dir.display()
                )
            })?;
        Ok(AtomicFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The temporary file, to write the contents into.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// The temporary file's path (for messages).
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Sets the permission bits and renames the file over the target. On
    /// error the temporary file is already gone.
    pub fn commit(self, mode: u32) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let AtomicFile { tmp, target } = self;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("cannot set the permissions of {}", target.display()))?;
        // The rename error owns the temporary file: drop (delete) it here
        // and keep only the I/O error.
        tmp.persist(&target).map_err(|e| {
            let err = e.error;
            drop(e.file);
            anyhow::Error::new(err)
                .context(format!("cannot move the result to {}", target.display()))
        })?;
        Ok(())
    }

    /// Runs `f` on the temporary file and commits with `mode` if it
    /// succeeds; on any error the temporary file is removed.
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

/// Writes `bytes` to `target` atomically with permission bits `mode`.
pub fn write_bytes(target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::io::Write;
    AtomicFile::write_with(target, mode, |f| Ok(f.write_all(bytes)?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn failed_writes_and_renames_leave_nothing() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out.bin");
        let e = AtomicFile::write_with(&t, 0o644, |_| bail!("boom")).unwrap_err();
        assert!(format!("{e:#}").contains("boom"));
        assert!(entries(d.path()).is_empty());
        // The target turns into a non-empty directory after the temporary
        // file exists: the rename fails, and the error owns no file.
        let out = AtomicFile::create(&t).unwrap();
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("keep"), b"").unwrap();
        let e = out.commit(0o644).unwrap_err();
        assert!(format!("{e:#}").contains("cannot move the result"), "{e:#}");
        assert_eq!(entries(d.path()), ["out.bin"]);
    }
}
