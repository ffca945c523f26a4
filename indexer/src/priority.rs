//! Thread priority: work nobody waits on (a reputation feed at a past block, the reads of a
//! client over much of its share of the server's time) runs on threads that lowered their own
//! priority, so the scheduler hands a core to any other thread that wants one first.
//!
//! Such a thread enters Linux's idle scheduling class (`SCHED_IDLE`). Measured on two cores,
//! the lowest nice value is not enough: a thread at nice 19 keeps its core for up to its
//! protected slice (about 4 ms) after an ordinary thread wakes to run beside it, even while the
//! other core sits idle, and that is what a quick request's tail then shows. A core running
//! only idle-class threads counts as free when a woken thread looks for one, and the woken
//! thread takes it at once. Where the class is refused, the thread takes nice 19.

/// The nice value a lowered thread takes where the idle class is refused: the lowest priority
/// of the normal class.
pub const LOWERED_NICE: i32 = 19;

/// Linux's number of the idle scheduling class (`SCHED_IDLE`), as `/proc` reports it.
pub const IDLE_POLICY: u32 = 5;

/// Moves the calling thread to the idle scheduling class, else to nice 19 (Linux keeps both
/// per thread). Where both fail (a sandbox refusing them), or on other systems, the thread runs
/// at the process's own priority and `what` is named in a debug log line.
pub fn lower_this_thread(what: &str) {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{
            NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
            set_thread_priority_and_policy, thread_native_id,
        };
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let Err(refused) =
            set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, idle)
        else {
            return;
        };
        tracing::debug!(target: "agentindex", error = ?refused, "{what}: no idle class");
        if let Err(error) =
            rustix::process::setpriority_process(Some(rustix::thread::gettid()), LOWERED_NICE)
        {
            tracing::debug!(target: "agentindex", %error, "{what} keeps its priority");
        }
    }
    #[cfg(not(target_os = "linux"))]
    tracing::debug!(target: "agentindex", "{what} keeps its priority (Linux only)");
}

/// Whether the thread with id `tid` of this process was lowered: in the idle class, or at nice
/// 19. From `/proc` (Linux only; for tests and diagnostics).
pub fn is_lowered(tid: i32) -> Option<bool> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces, so split after its ')'): state is
    // field 3, nice field 19, policy field 41.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    let nice: i32 = fields.get(16)?.parse().ok()?;
    let policy: u32 = fields.get(38)?.parse().ok()?;
    Some(policy == IDLE_POLICY || nice == LOWERED_NICE)
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
            let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
            let fields: Vec<String> = stat[stat.rfind(')').unwrap() + 2..]
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            (is_lowered(this_thread().unwrap()), fields[38].clone())
        })
        .join()
        .unwrap();
        assert_eq!(lowered.0, Some(true));
        assert_eq!(
            lowered.1,
            IDLE_POLICY.to_string(),
            "the idle class, as root"
        );
        assert_eq!(is_lowered(here), Some(false));
    }
}
