//! Error kinds of the rpath editor. Each message names what is wrong and
//! what to do about it; callers match on the kind (tests, the CLI's exit).

use std::fmt;

#[derive(Debug)]
pub enum EditError {
    /// The file does not start with the ELF magic.
    NotElf,
    /// A structure the header points to lies (partly) beyond the end of file.
    Truncated(String),
    /// ELFCLASS32.
    Not64Bit,
    /// ELFDATA2MSB.
    BigEndian,
    /// e_machine other than those the edit supports (named, e.g. `x86_64`).
    WrongMachine(u16, String),
    /// e_type other than ET_EXEC / ET_DYN (object files, core dumps).
    WrongType(u16),
    /// No PT_DYNAMIC: a static executable has no run-time search path.
    NoDynamic,
    /// A static-pie executable (ET_DYN with DF_1_PIE but no PT_INTERP): it
    /// relocates itself before anything could read a moved dynamic section,
    /// and loads no libraries, so an rpath has no use.
    StaticPie,
    /// Internally inconsistent ELF.
    Malformed(String),
    /// The new string (or the segment holding it) cannot be placed.
    CannotPlace(String),
    /// The edit would change what the program needs (a strong reference).
    Refused(String),
    Io(std::io::Error),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::NotElf => write!(
                f,
                "not an ELF file (no \\x7fELF magic); pass a shared library or executable"
            ),
            EditError::Truncated(what) => write!(
                f,
                "truncated ELF file: the {what} extends past the end of the file; \
                 the file is damaged or was cut short, rebuild or re-download it"
            ),
            EditError::Not64Bit => write!(
                f,
                "32-bit ELF (ELFCLASS32) is not supported; only ELF64 x86-64 files can be edited"
            ),
            EditError::BigEndian => write!(
                f,
                "big-endian ELF (ELFDATA2MSB) is not supported; only little-endian x86-64 files can be edited"
            ),
            EditError::WrongMachine(m, supported) => write!(
                f,
                "ELF machine {m} ({}) is not supported; this edit takes {supported} files only",
                elf_read::names::machine_to_str(*m)
            ),
            EditError::WrongType(t) => write!(
                f,
                "ELF type {t} ({}) has no run-time search path; pass a shared library (ET_DYN) or an executable (ET_EXEC)",
                elf_read::names::et_to_str(*t)
            ),
            EditError::NoDynamic => write!(
                f,
                "no dynamic section (PT_DYNAMIC): this is a statically linked file, which has no rpath; \
                 link it dynamically if it needs one"
            ),
            EditError::StaticPie => write!(
                f,
                "this is a static-pie executable (no program interpreter): it loads no shared \
                 libraries, so it has no use for an rpath, and its start-up code cannot cope with \
                 an edited dynamic section; leave it as it is, or link it dynamically if it needs one"
            ),
            EditError::Malformed(why) => write!(f, "malformed ELF file: {why}"),
            EditError::CannotPlace(why) => write!(f, "cannot place the new rpath: {why}"),
            EditError::Refused(why) => write!(f, "refused: {why}"),
            EditError::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for EditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EditError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<elf_read::Error> for EditError {
    fn from(e: elf_read::Error) -> Self {
        match e {
            elf_read::Error::NotElf => EditError::NotElf,
            elf_read::Error::Truncated(what) => EditError::Truncated(what),
            elf_read::Error::Malformed(why) => EditError::Malformed(why),
            elf_read::Error::Invalid(why) => EditError::Malformed(why),
            elf_read::Error::Io(e) => EditError::Io(e),
        }
    }
}

impl From<std::io::Error> for EditError {
    fn from(e: std::io::Error) -> Self {
        EditError::Io(e)
    }
}

pub type Result<T> = std::result::Result<T, EditError>;
