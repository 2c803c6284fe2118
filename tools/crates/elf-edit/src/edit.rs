//! What an edit asks for ([`Edit`], [`RpathKind`]) and what planning it
//! gives ([`Plan`], [`Method`]): the crate's public vocabulary.

use crate::parse::{DT_RPATH, DT_RUNPATH};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpathKind {
    /// DT_RUNPATH: searched after LD_LIBRARY_PATH, not inherited (the default).
    Runpath,
    /// DT_RPATH: searched before LD_LIBRARY_PATH (legacy).
    Rpath,
}

impl RpathKind {
    pub fn tag(self) -> u64 {
        match self {
            RpathKind::Runpath => DT_RUNPATH,
            RpathKind::Rpath => DT_RPATH,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            RpathKind::Runpath => "RUNPATH",
            RpathKind::Rpath => "RPATH",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    Set { rpath: Vec<u8>, kind: RpathKind },
    Remove,
}

/// How the change was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The file already had exactly this value.
    Unchanged,
    /// Only existing bytes were rewritten; the file size is unchanged.
    InPlace,
    /// A new PT_LOAD holding a grown .dynstr was appended.
    Appended {
        moved_dynamic: bool,
        moved_phdrs: bool,
    },
}

impl Method {
    /// How the file was written, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Unchanged => "unchanged",
            Method::InPlace => "rewritten in place",
            Method::Appended { .. } => "grown: new .dynstr in an appended segment",
        }
    }
}

#[derive(Debug)]
pub struct Plan {
    /// (file offset, bytes) to write over the copied input.
    pub patches: Vec<(u64, Vec<u8>)>,
    /// Final file length (>= input length).
    pub new_len: u64,
    pub method: Method,
}
