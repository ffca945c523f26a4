//! Thread priority: work nobody waits on (a reputation feed at a past block, the reads of a
//! client over much of its share of the server's time) runs on threads that lowered their own
//! priority to nice 19, and offers its core to others every few hundred microseconds
//! ([`offer_core`]), so any other thread that wants a core gets one first.
//!
//! Why both. Measured on two cores under a kernel without forced preemption (`PREEMPT_NONE`,
//! 250 Hz), a busy thread at nice 19 kept its core for up to a timer tick (4 ms) after an
//! ordinary thread woke to run beside it, and that tick is what a quick request's tail showed.
//! The idle scheduling class (`SCHED_IDLE`) did no better there and made rare stalls of 90 ms
//! (a thread that gets almost no time while it holds something others wait for), so it is not
//! used. The offers are the preemption points the kernel does not make.

std::thread_local! {
    /// Whether this thread lowered itself.
    static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The nice value of a lowered thread: the lowest priority of the normal class.
pub const LOWERED_NICE: i32 = 19;

/// Gives the calling thread nice 19 (Linux keeps it per thread). Where that fails (a sandbox
/// refusing it), or on other systems, the thread runs at the process's own priority and `what`
/// is named in a debug log line.
pub fn lower_this_thread(what: &str) {
    #[cfg(target_os = "linux")]
    match rustix::process::setpriority_process(Some(rustix::thread::gettid()), LOWERED_NICE) {
        Ok(()) => LOWERED.with(|lowered| lowered.set(true)),
        Err(error) => tracing::debug!(target: "agentindex", %error, "{what} keeps its priority"),
    }
    #[cfg(not(target_os = "linux"))]
    tracing::debug!(target: "agentindex", "{what} keeps its priority (Linux only)");
}

/// On a lowered thread, offers its core to any other thread waiting for one (`sched_yield`,
/// about a microsecond when none is); elsewhere nothing. Long computations that may run on a
/// lowered thread call this every few hundred microseconds of work.
pub fn offer_core() {
    if LOWERED.with(std::cell::Cell::get) {
        std::thread::yield_now();
    }
}

/// The nice value of the thread with id `tid` in this process, from `/proc` (Linux only; for
/// tests and diagnostics).
pub fn nice_of_thread(tid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces, so split after its ')'): state is
    // field 3, nice field 19.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(16)?.parse().ok()
}

/// Whether the thread with id `tid` of this process was lowered (Linux only; for tests and
/// diagnostics).
pub fn is_lowered(tid: i32) -> Option<bool> {
    nice_of_thread(tid).map(|nice| nice == LOWERED_NICE)
}

/// The ids of this process's threads whose name starts with `prefix` (Linux only; for tests
/// and diagnostics).
pub fn threads_named(prefix: &str) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| {
            let task = task.ok()?;
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let tid = task.file_name().to_str()?.parse().ok()?;
            comm.starts_with(prefix).then_some(tid)
        })
        .collect()
}

/// The calling thread's id (Linux only; for tests and diagnostics).
pub fn this_thread() -> Option<i32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_lowers_itself_and_no_other() {
        let here = this_thread().unwrap();
        assert_eq!(is_lowered(here), Some(false));
        let lowered = std::thread::spawn(|| {
            lower_this_thread("the test's thread");
            (
                nice_of_thread(this_thread().unwrap()),
                LOWERED.with(std::cell::Cell::get),
            )
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (Some(LOWERED_NICE), true));
        assert_eq!(is_lowered(here), Some(false));
        assert!(!LOWERED.with(std::cell::Cell::get), "the test's own thread");
    }
}
