//! Extended attributes of an open file, read before an in-place edit and
//! put back after it: the kernel removes `security.capability` when a file
//! is written, and an edit must not change what the file is allowed to do.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

pub type Attrs = Vec<(CString, Vec<u8>)>;

/// Calls `f(buf)` with a growing buffer until the result fits (the
/// size-query-then-read protocol of the *xattr syscalls, which may race).
fn sized(mut f: impl FnMut(&mut [u8]) -> isize) -> io::Result<Vec<u8>> {
    loop {
        let n = f(&mut []);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buf = vec![0u8; n as usize];
        let m = f(&mut buf);
        if m >= 0 {
            buf.truncate(m as usize);
            return Ok(buf);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP))
}

pub fn read_all(file: &File) -> io::Result<Attrs> {
    let fd = file.as_raw_fd();
    // SAFETY: the buffer pointer and length describe a live allocation.
    let names = match sized(|b| unsafe { libc::flistxattr(fd, b.as_mut_ptr().cast(), b.len()) }) {
        Ok(n) => n,
        Err(e) if unsupported(&e) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for name in names.split(|&c| c == 0).filter(|n| !n.is_empty()) {
        let name = CString::new(name).expect("split at NUL");
        // SAFETY: as above; `name` is NUL-terminated.
        let value = sized(|b| unsafe {
            libc::fgetxattr(fd, name.as_ptr(), b.as_mut_ptr().cast(), b.len())
        })?;
        out.push((name, value));
    }
    Ok(out)
}

/// Sets every attribute of `attrs` that is missing or different now.
pub fn restore(file: &File, attrs: &Attrs) -> io::Result<()> {
    if attrs.is_empty() {
        return Ok(());
    }
    let now = read_all(file)?;
    for (name, value) in attrs {
        if now.iter().any(|(n, v)| n == name && v == value) {
            continue;
        }
        // SAFETY: pointers and lengths describe live buffers.
        let r = unsafe {
            libc::fsetxattr(
                file.as_raw_fd(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
