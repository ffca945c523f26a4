//! Peak memory of a process, from `/proc`, for tests and benchmarks that bound it.

/// The peak resident set (VmHWM) of `process` (a pid, or `self`), in KiB.
pub(crate) fn peak_kib(process: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
