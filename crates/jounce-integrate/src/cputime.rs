//! CPU time of the calling thread, for reporting the cost of an integration
//! alone (output and I/O excluded).

/// Seconds of CPU time used by this thread so far (the thread's CPU clock:
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on Unix, through the
/// `cpu-time` crate); 0 where the clock cannot be read.
pub fn thread_cpu_seconds() -> f64 {
    cpu_time::ThreadTime::try_now().map_or(0.0, |t| t.as_duration().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::thread_cpu_seconds;

    /// The clock is this thread's: it advances while the thread computes
    /// and not while it sleeps.
    #[test]
    fn thread_cpu_time_advances_with_work_and_not_with_sleep() {
        let t0 = thread_cpu_seconds();
        let mut x = 0.0f64;
        for i in 0..20_000_000u64 {
            x += (i as f64).sqrt();
        }
        std::hint::black_box(x);
        let t1 = thread_cpu_seconds();
        assert!(t1 > t0, "{t0} -> {t1}");
        std::thread::sleep(std::time::Duration::from_millis(200));
        let t2 = thread_cpu_seconds();
        assert!(t2 - t1 < 0.1, "sleeping used {} s of CPU", t2 - t1);
    }
}
