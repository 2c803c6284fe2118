//! Allocator tuning for the memory bounds (README "Memory bounds").

/// Buffers at least this big get their own mapping, returned to the system
/// when freed.
const MMAP_THRESHOLD: i32 = 4 << 20;

/// Makes glibc hand large freed buffers back to the system. By default it
/// raises its mmap threshold to the size of each large buffer freed (up to
/// 32 MiB) and then serves buffers of that size from the heap, where freed
/// memory stays resident: one wheel member's bytes would still count while
/// the next one is read. A fixed threshold turns that off.
pub fn return_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; it is called first
    // thing in main, before any thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
