//! Memory handed back to the system once a large structure is gone.
//!
//! glibc's allocator serves mid-sized blocks (a dedup shard's table, a few
//! MiB) from its heap and keeps them when they are freed, ready for the next
//! allocation of the same kind. A structure freed so that a different one
//! can take its place (one large array) would then add to the process's
//! resident memory instead of reusing it. Trimming the heap returns the
//! free pages, wherever they lie in it.

/// Returns the allocator's free pages to the system, where the allocator
/// keeps them (glibc); elsewhere, does nothing.
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases pages the allocator holds free; it
    // touches no live allocation and may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
