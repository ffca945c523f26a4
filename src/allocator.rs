//! The allocator's one setting the binary changes: how soon mimalloc hands freed pages back to
//! the system. mimalloc reads its options from the environment once, as the process starts,
//! and setting one from the program needs `unsafe` (`mi_option_set`), which the workspace
//! forbids; so when `MIMALLOC_PURGE_DELAY` is not set the process runs itself again at once
//! with it set (`exec`: the same process id, arguments and open files), before any thread or
//! file of its own exists. An operator's own setting is left as it is.
//!
//! Why 1 ms instead of mimalloc's 10: a page freed by a thread is handed back only when that
//! thread next allocates after the delay, and the writer, the scoring threads and SQLite's
//! connection threads work in bursts; with 10 ms the M backfill peaked at 146 to 156 MiB
//! resident, with 1 ms mostly at 115 to 122 MiB in about the same time (0 cost a fifth more
//! time): BENCHMARKS.md, "A backfill's peak memory by default".

/// The environment variable mimalloc reads its purge delay from, in milliseconds.
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";
/// The delay the binary runs with unless the environment says otherwise.
const PURGE_DELAY_MS: &str = "1";

/// Runs the binary again with [`PURGE_DELAY`] set, unless it is set already; returns only if it
/// was, or if running again failed (the process then goes on with mimalloc's default).
pub(crate) fn settle() {
    #[cfg(target_os = "linux")]
    if std::env::var_os(PURGE_DELAY).is_none() {
        use std::os::unix::process::CommandExt;
        let mut args = std::env::args_os();
        let program = args.next().unwrap_or_default();
        // `/proc/self/exe` is this very binary, even if its file was replaced since it started.
        let error = std::process::Command::new("/proc/self/exe")
            .arg0(program)
            .args(args)
            .env(PURGE_DELAY, PURGE_DELAY_MS)
            .exec();
        eprintln!("warning: could not set {PURGE_DELAY} for the allocator: {error}");
    }
}
