//! Peak memory of a process, from `/proc`, for tests and benchmarks that bound it.

/// The peak resident set (VmHWM) of `process` (a pid, or `self`), in KiB.
pub(crate) fn peak_kib(process: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The resident set of `process` now, split as `/proc` does: its own memory (`RssAnon`: heap
/// and stacks) and the file pages it maps (`RssFile`, such as a database file read through
/// `mmap`: the page cache's, shared and reclaimable), in KiB.
#[allow(dead_code)]
pub(crate) fn resident_parts_kib(process: &str) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("RssAnon:")?, field("RssFile:")?))
}
