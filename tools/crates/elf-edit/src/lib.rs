//! Read and edit DT_RUNPATH / DT_RPATH of ELF64 little-endian x86-64 shared
//! libraries and executables.
//!
//! elf-read decodes the headers; the writing is ours. The input is never read
//! whole: only the headers, the dynamic array, `.dynstr` and (when needed)
//! the symbol tables are read. The output is a kernel-side copy of the input
//! (`copy_file_range`, a reflink where the file system can) with a few
//! patches written over it and, when the new string does not fit, an
//! appended segment; it is renamed over the destination only when complete.
//!
//! Growing works like patchelf's: `.dynstr` (old contents + new string, so
//! every old offset stays valid) goes into a new read-only PT_LOAD at a
//! page-aligned file offset and a vaddr above every segment, with
//! `p_offset ≡ p_vaddr (mod p_align)`. The new PT_LOAD needs a program
//! header slot: a PT_NULL entry if there is one, else free bytes after the
//! table, else the sections right after the table (`.interp`, notes, hash
//! tables, `.dynsym`, ...: things only program headers and dynamic tags
//! point to) move into the new segment, so the table stays where binutils
//! expect it. Only if that is impossible does the table itself move. If the
//! dynamic array has no spare DT_NULL for a new entry it moves too, and the
//! segment becomes writable (PT_DYNAMIC must be in a writable PT_LOAD).
//! Section headers are kept sorted, with every section index remapped.
//! A shorter string is written over the old one, unless the linker merged
//! another string (a symbol name) into its tail.

mod edit;
mod error;
mod parse;
mod plan;
mod versions;
mod xattr;

pub use edit::{Edit, Method, Plan, RpathKind};
pub use error::{EditError, Result};
pub use parse::ReadAt;
pub use versions::{glibc_version, plan_glibc_floor, FloorReport};

use parse::{FileSource, DT_RPATH, DT_RUNPATH};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One DT_RUNPATH or DT_RPATH entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpathEntry {
    pub kind: RpathKind,
    pub value: Vec<u8>,
}

impl RpathEntry {
    pub fn value_lossy(&self) -> String {
        String::from_utf8_lossy(&self.value).into_owned()
    }

    /// The value on one unambiguous line: a backslash, control characters
    /// (`\n`, `\t`, `\r`, else `\xNN`) and bytes that are not UTF-8
    /// (`\xNN`) are escaped; anything else is printed as it is.
    pub fn value_escaped(&self) -> String {
        let mut out = String::with_capacity(self.value.len());
        for chunk in self.value.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c if c.is_control() => {
                        for b in c.to_string().bytes() {
                            out.push_str(&format!("\\x{b:02x}"));
                        }
                    }
                    c => out.push(c),
                }
            }
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
}

/// `rocm-wheel rpath show`'s lines: `RUNPATH <value>` per entry, escaped
/// ([`RpathEntry::value_escaped`]), or a line saying there is none.
pub fn rpath_lines(entries: &[RpathEntry]) -> String {
    if entries.is_empty() {
        return "(no RUNPATH or RPATH)\n".to_string();
    }
    entries
        .iter()
        .map(|e| format!("{} {}\n", e.kind.name(), e.value_escaped()))
        .collect()
}

fn entries(p: &parse::Parsed) -> Result<Vec<RpathEntry>> {
    p.dyns
        .iter()
        .filter_map(|d| match d.tag {
            DT_RUNPATH => Some((RpathKind::Runpath, d.val)),
            DT_RPATH => Some((RpathKind::Rpath, d.val)),
            _ => None,
        })
        .map(|(kind, off)| {
            Ok(RpathEntry {
                kind,
                value: p.str_at(off)?.to_vec(),
            })
        })
        .collect()
}

fn open(path: &Path) -> Result<FileSource> {
    Ok(FileSource::new(File::open(path)?)?)
}

/// The DT_RUNPATH / DT_RPATH entries of an ELF file, in dynamic-array order.
pub fn read_rpath(path: &Path) -> Result<Vec<RpathEntry>> {
    let src = open(path)?;
    entries(&parse::parse(&src)?)
}

/// [`read_rpath`] on bytes in memory.
pub fn read_rpath_bytes(bytes: &[u8]) -> Result<Vec<RpathEntry>> {
    entries(&parse::parse(bytes)?)
}

/// Plans `edit` against `src` without writing anything.
pub fn plan_edit<S: ReadAt + ?Sized>(src: &S, edit: &Edit) -> Result<Plan> {
    let parsed = parse::parse(src)?;
    let plan = plan::plan(src, &parsed, edit)?;
    verify(src, &plan, edit)?;
    Ok(plan)
}

/// The input as it will be after `plan`, read lazily: patches over the
/// input, zeros past its end.
struct Overlay<'a, S: ?Sized> {
    base: &'a S,
    plan: &'a Plan,
}

impl<S: ReadAt + ?Sized> ReadAt for Overlay<'_, S> {
    fn size(&self) -> u64 {
        self.plan.new_len
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let end = offset + buf.len() as u64;
        let base_end = end.min(self.base.size());
        buf.fill(0);
        if offset < base_end {
            self.base
                .read_exact_at(&mut buf[..(base_end - offset) as usize], offset)?;
        }
        for (off, bytes) in &self.plan.patches {
            let (a, b) = (offset.max(*off), end.min(off + bytes.len() as u64));
            if a < b {
                buf[(a - offset) as usize..(b - offset) as usize]
                    .copy_from_slice(&bytes[(a - off) as usize..(b - off) as usize]);
            }
        }
        Ok(())
    }
}

/// Re-reads the planned result (only its headers, dynamic array and string
/// table) and checks it carries exactly the requested change; a file whose
/// own structures overlap in odd ways is refused rather than damaged.
fn verify<S: ReadAt + ?Sized>(src: &S, plan: &Plan, edit: &Edit) -> Result<()> {
    if plan.method == Method::Unchanged {
        return Ok(());
    }
    let view = Overlay { base: src, plan };
    let after = parse::parse(&view).and_then(|p| entries(&p));
    let ok = match (&after, edit) {
        (Ok(e), Edit::Remove) => e.is_empty(),
        (Ok(e), Edit::Set { rpath, kind }) => {
            // Like patchelf, a DT_RPATH next to a DT_RUNPATH keeps its tag.
            e.iter().all(|e| e.value == *rpath) && e.iter().any(|e| e.kind == *kind)
        }
        (Err(_), _) => false,
    };
    if ok {
        Ok(())
    } else {
        Err(EditError::CannotPlace(format!(
            "the file's headers overlap each other, so the edited file would not read back \
             correctly ({}); the file is probably damaged",
            match after {
                Ok(e) => format!("it would show {e:?}"),
                Err(e) => e.to_string(),
            }
        )))
    }
}

/// Applies `edit` to bytes in memory and returns the new file contents.
pub fn edit_bytes(input: &[u8], edit: &Edit) -> Result<(Vec<u8>, Method)> {
    let plan = plan_edit(input, edit)?;
    let mut out = input.to_vec();
    out.resize(plan.new_len as usize, 0);
    for (off, bytes) in &plan.patches {
        let off = *off as usize;
        out[off..off + bytes.len()].copy_from_slice(bytes);
    }
    Ok((out, plan.method))
}

/// Applies `edit` to the file `input`, writing `output` (default: `input`
/// itself); on any error the input is untouched and no output exists.
///
/// A separate `output` is a kernel-side copy of the input with the patches
/// applied, written through [`atomic_write`] (mode bits of the input
/// without set-user/group-ID). In place, the file keeps its inode, like
/// patchelf: only the patched bytes and the appended segment are written
/// into it, so owner, mode, extended attributes (file capabilities) and
/// hard links stay; the space for growth is reserved before the first
/// byte changes.
pub fn edit_file(input: &Path, output: Option<&Path>, edit: &Edit) -> anyhow::Result<Method> {
    use anyhow::Context;
    match output {
        Some(output) => {
            let src = open(input).with_context(|| format!("cannot open {}", input.display()))?;
            let plan = plan_edit(&src, edit).with_context(|| format!("{}", input.display()))?;
            let mut out = atomic_write::AtomicFile::create(output)?;
            write_output(&src, &plan, out.file())
                .with_context(|| format!("cannot write {}", output.display()))?;
            use std::os::unix::fs::PermissionsExt;
            let mode = src.file.metadata()?.permissions().mode() & 0o1777;
            out.commit(mode)?;
            Ok(plan.method)
        }
        None => edit_in_place(input, edit),
    }
}

/// Lowers the glibc floor of `input` to `max` ([`plan_glibc_floor`]),
/// writing `output` atomically (the input's mode bits); the result is read
/// back and must need nothing newer. On any error no output exists.
pub fn lower_glibc_floor(
    input: &Path,
    output: &Path,
    max: (u32, u32),
) -> anyhow::Result<FloorReport> {
    use anyhow::Context;
    use std::os::unix::fs::PermissionsExt;
    let same = match (input.canonicalize(), output.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => input == output,
    };
    if same {
        anyhow::bail!(
            "-o {} is the input file: the input is never changed; give another output path",
            output.display()
        );
    }
    let src = open(input).with_context(|| format!("cannot open {}", input.display()))?;
    let (plan, report) =
        plan_glibc_floor(&src, max).with_context(|| format!("{}", input.display()))?;
    let view = Overlay {
        base: &src,
        plan: &plan,
    };
    // Read back as the loader will read the output (see plan_glibc_floor).
    let (again, after) = plan_glibc_floor(&view, max).with_context(|| {
        format!(
            "{}: the edited file would not load; nothing written",
            input.display()
        )
    })?;
    if again.method != Method::Unchanged || after.floor != report.floor {
        anyhow::bail!(
            "{}: the edited file does not read back with glibc {}.{} as its floor; the file is probably damaged",
            input.display(),
            max.0,
            max.1
        );
    }
    let mut out = atomic_write::AtomicFile::create(output)?;
    write_output(&src, &plan, out.file())
        .with_context(|| format!("cannot write {}", output.display()))?;
    let mode = src.file.metadata()?.permissions().mode() & 0o1777;
    out.commit(mode)?;
    Ok(report)
}

fn edit_in_place(input: &Path, edit: &Edit) -> anyhow::Result<Method> {
    use anyhow::Context;
    use std::os::unix::fs::PermissionsExt;
    // Through a symlink this opens (and edits) the file it points to.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(input)
        .with_context(|| {
            format!(
                "cannot open {} for writing (in-place edits write into the file itself; \
                 use --output to write elsewhere)",
                input.display()
            )
        })?;
    let meta = file.metadata()?;
    let src = FileSource {
        file,
        len: meta.len(),
    };
    let plan = plan_edit(&src, edit).with_context(|| format!("{}", input.display()))?;
    if plan.method == Method::Unchanged {
        return Ok(plan.method);
    }
    let xattrs = xattr::read_all(&src.file)
        .with_context(|| format!("cannot read the extended attributes of {}", input.display()))?;
    apply_in_place(&src, &plan).with_context(|| format!("cannot write {}", input.display()))?;
    // Writing clears set-user-ID for non-root writers and drops
    // security.capability for everyone; put back what the file had.
    let mode = meta.permissions().mode() & 0o7777;
    if src.file.metadata()?.permissions().mode() & 0o7777 != mode {
        src.file
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| {
                format!(
                    "{} was edited but its mode {mode:o} cannot be restored",
                    input.display()
                )
            })?;
    }
    xattr::restore(&src.file, &xattrs).with_context(|| {
        format!(
            "{} was edited but its extended attributes cannot be restored",
            input.display()
        )
    })?;
    Ok(plan.method)
}

/// Writes the plan into the input file itself. Growth is reserved first
/// (fallocate), so a full disk fails before any byte of the input changes;
/// bytes past the old end are written before the patches inside it.
fn apply_in_place(src: &FileSource, plan: &Plan) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    if plan.new_len > src.len {
        // SAFETY: plain syscall on an open descriptor.
        let r = unsafe {
            libc::fallocate(
                src.file.as_raw_fd(),
                0,
                src.len as libc::off_t,
                (plan.new_len - src.len) as libc::off_t,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            // File systems without fallocate: grow by writing instead.
            if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
                return Err(e);
            }
        }
    }
    let (tail, inside): (Vec<_>, Vec<_>) = plan
        .patches
        .iter()
        .partition(|(off, b)| *off + b.len() as u64 > src.len);
    for (off, bytes) in tail.into_iter().chain(inside) {
        src.file.write_all_at(bytes, *off)?;
    }
    src.file.set_len(plan.new_len)
}

fn write_output(src: &FileSource, plan: &Plan, out: &mut File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // A reflink (btrfs, XFS) shares the data blocks: no copy at all.
    const FICLONE: libc::c_ulong = 0x4004_9409;
    // SAFETY: both descriptors are open for the duration of the call.
    let cloned = unsafe { libc::ioctl(out.as_raw_fd(), FICLONE, src.file.as_raw_fd()) } == 0;
    if !cloned {
        // Reserving the blocks first lets ext4 allocate one large extent
        // instead of page by page during the copy (measured: about twice as
        // fast on a 470 MB library). Where unsupported the copy still works.
        // SAFETY: plain syscall on an open descriptor.
        unsafe { libc::fallocate(out.as_raw_fd(), 0, 0, src.len as libc::off_t) };
        // std's File-to-File copy uses copy_file_range: the data is copied
        // inside the kernel and never passes through our memory.
        let mut reader = &src.file;
        let copied = std::io::copy(&mut reader, out)?;
        if copied != src.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the input changed size while it was being copied",
            ));
        }
    }
    for (off, bytes) in &plan.patches {
        out.write_all_at(bytes, *off)?;
    }
    out.set_len(plan.new_len)?;
    out.flush()
}

#[cfg(feature = "fuzzing")]
mod fuzz;
#[cfg(feature = "fuzzing")]
pub use fuzz::{fuzz_one, goblin_rpaths};
