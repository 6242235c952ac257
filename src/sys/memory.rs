//! How the process's memory is kept and handed back: what glibc's allocator
//! does by default is tuned for programs unlike this one.
//!
//! glibc serves a block past its mmap threshold (128 KiB) from its own
//! mapping, which goes back to the system when freed, and a smaller block
//! from its heap, which keeps freed memory for reuse. By default it raises
//! the threshold to the size of any mapped block freed, up to 32 MiB: one
//! freed buffer of half a MiB (a seen store's index read at open, say) then
//! sends every later table of that size to the heap, where each copy left
//! behind as a table grows stays resident. Measured on a 14M-line check
//! against a store of 10^8 keys: 80 MB more at the peak than against an
//! empty store, from that alone.

/// The mmap threshold made fixed: the default's, and no longer raised
/// (`M_MMAP_THRESHOLD` set turns the raising off). A no-op where the
/// allocator is not glibc's. Called once, at the start of the program.
pub fn keep_large_blocks_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt changes a setting of the allocator; it is called
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Returns the allocator's free pages to the system, where the allocator
/// keeps them (glibc's heap): a structure freed so that a different one
/// can take its place (a dedup set's tables, then a bulk join's array)
/// would otherwise leave its pages resident beside the new one. Elsewhere,
/// does nothing.
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases pages the allocator holds free; it
    // touches no live allocation and may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
