//! CPU time of the calling thread, for reporting the cost of an integration
//! alone (output and I/O excluded).

/// Seconds of CPU time used by this thread so far
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
