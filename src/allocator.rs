//! The allocator's one setting the binary changes: how soon mimalloc hands freed pages back to
//! the system. mimalloc reads its options from the environment once, as the process starts,
//! and setting one from the program needs `unsafe` (`mi_option_set`), which the workspace
//! forbids. So on Linux, when no purge delay is set in the environment, the process runs itself
//! again at once with `MIMALLOC_PURGE_DELAY=1` (`exec` of its own file: the same process id,
//! name, arguments and open files), before any thread or file of its own exists. An operator's
//! own setting (under either of mimalloc's names, in any case) is left as it is.
//!
//! Why 1 ms instead of mimalloc's 10: a page freed by a thread is handed back only when that
//! thread next allocates after the delay, and the writer, the scoring threads and SQLite's
//! connection threads work in bursts. The M backfill peaked at 154 to 158 MiB resident before,
//! at 115 to 120 MiB in four passes (up to 133 in others) with 1 ms and the smaller statements
//! and rounds of the same change, in about the same time; 0 cost a fifth more time
//! (BENCHMARKS.md, "A backfill's peak memory by default").

/// The environment variable mimalloc reads its purge delay from, in milliseconds.
#[cfg(target_os = "linux")]
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";
/// The delay the binary runs with unless the environment says otherwise.
#[cfg(target_os = "linux")]
const PURGE_DELAY_MS: &str = "1";

/// Why the purge delay was not set, for the log once it is up.
pub(crate) struct Unsettled {
    pub(crate) reason: String,
    /// Whether a failed `exec` left SIGPIPE at its default action (std resets it before
    /// running a program, and nothing puts it back when that fails).
    pub(crate) broken_pipes_kill: bool,
}

/// Runs the binary again with [`PURGE_DELAY`] set, unless the environment sets a delay already;
/// returns only then (`None`), or when it could not (the process goes on with mimalloc's 10
/// ms).
#[cfg(target_os = "linux")]
pub(crate) fn settle() -> Option<Unsettled> {
    use std::os::unix::process::CommandExt;
    // mimalloc matches the names in any case, and reads the delay's old name too.
    let set_already = std::env::vars_os().any(|(name, _)| {
        name.to_str().is_some_and(|name| {
            [PURGE_DELAY, "MIMALLOC_RESET_DELAY"]
                .iter()
                .any(|known| name.eq_ignore_ascii_case(known))
        })
    });
    if set_already {
        return None;
    }
    let skipped = |why: String| {
        Some(Unsettled {
            reason: format!(
                "{why}: the allocator keeps freed memory for 10 ms (set {PURGE_DELAY} in the \
                 environment to choose; {PURGE_DELAY_MS} is the default elsewhere)"
            ),
            broken_pipes_kill: false,
        })
    };
    let own_file = match std::env::current_exe() {
        Ok(path) => path,
        Err(error) => return skipped(format!("this binary's file is unknown ({error})")),
    };
    let file_name = own_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if file_name.starts_with("ld-") || file_name.starts_with("ld.so") {
        // Run through the dynamic loader: running the loader again with these arguments would
        // not run this binary.
        return skipped(format!("started through the dynamic loader {file_name}"));
    }
    // A file replaced since the process started is gone from its path; `/proc/self/exe` is
    // still this binary (the process is then named `exe`).
    let program = match own_file.exists() {
        true => own_file,
        false => std::path::PathBuf::from("/proc/self/exe"),
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_default();
    let error = std::process::Command::new(program)
        .arg0(arg0)
        .args(args)
        .env(PURGE_DELAY, PURGE_DELAY_MS)
        .exec();
    Some(Unsettled {
        broken_pipes_kill: true,
        ..skipped(format!("running itself again failed ({error})"))?
    })
}

/// Elsewhere the binary runs with mimalloc's own delay.
#[cfg(not(target_os = "linux"))]
pub(crate) fn settle() -> Option<Unsettled> {
    None
}

/// Puts a handler on SIGPIPE (tokio's, never removed), so a write to a closed pipe or socket
/// fails with an error instead of killing the process, as Rust programs run otherwise.
#[cfg(unix)]
pub(crate) fn survive_broken_pipes() {
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::pipe());
}
