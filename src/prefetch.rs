//! A cache hint: ask the CPU to start loading a value's cache line, so that a miss overlaps with
//! the work before the value is needed. No effect on results; nothing on targets other than
//! x86-64.

/// Starts loading the cache line of `x` (a hint; it cannot fault and changes no memory).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only needs SSE, which every x86-64 CPU has; a prefetch never faults
    // and changes no memory (the address is a live reference anyway).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
