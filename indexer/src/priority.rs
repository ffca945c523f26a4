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
/// about a microsecond when none is), and rests when lowered threads together have used more
/// than their ration of the processor ([`ration_lowered_threads`]); elsewhere nothing. Long
/// computations that may run on a lowered thread call this every few hundred microseconds of
/// work.
pub fn offer_core() {
    if LOWERED.with(std::cell::Cell::get) {
        std::thread::yield_now();
        #[cfg(target_os = "linux")]
        if let Some(rest) = lowered_budget::charge_this_thread() {
            std::thread::sleep(rest);
        }
    }
}

/// How many cores the lowered threads of the process may use together, on average, unless
/// [`ration_lowered_threads`] says otherwise.
pub const LOWERED_CORES: f64 = 0.5;

/// The lowered threads' ration in cores, as the bits of an `f64`.
static RATION: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(LOWERED_CORES.to_bits());

/// Sets how many cores the lowered threads of this process may use together, on average
/// (`[api] low_priority_cores`). Priorities decide who runs first, not what runs beside: a
/// lookup answered while a lowered thread computed on the other core still took up to three
/// times as long at the 99th percentile (measured on two cores beside a past block's feed;
/// neither the idle scheduling class nor shorter time slices changed that), so lowered work is
/// rationed as well.
pub fn ration_lowered_threads(cores: f64) {
    RATION.store(cores.to_bits(), std::sync::atomic::Ordering::Relaxed);
}

/// The lowered threads' ration in cores.
fn ration() -> f64 {
    f64::from_bits(RATION.load(std::sync::atomic::Ordering::Relaxed))
}

/// The processor time lowered threads used beyond their ration, drained at the ration's rate.
#[cfg(target_os = "linux")]
mod lowered_budget {
    use std::cell::Cell;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// What lowered threads may run past their ration before one rests.
    const SLACK: Duration = Duration::from_millis(2);

    std::thread_local! {
        /// This thread's processor time when it last charged.
        static CHARGED_UP_TO: Cell<Option<Duration>> = const { Cell::new(None) };
    }

    /// Owed time, as of an instant.
    static OWED: Mutex<Option<(Instant, Duration)>> = Mutex::new(None);

    fn thread_cpu_time() -> Duration {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(
            u64::try_from(now.tv_sec).unwrap_or(0),
            u32::try_from(now.tv_nsec).unwrap_or(0),
        )
    }

    /// Charges the processor time this thread used since it last charged; how long it should
    /// rest, if the lowered threads together are over their ration.
    pub(super) fn charge_this_thread() -> Option<Duration> {
        let cpu = thread_cpu_time();
        let spent = cpu.saturating_sub(CHARGED_UP_TO.replace(Some(cpu)).unwrap_or(cpu));
        charge(&OWED, spent, Instant::now(), super::ration())
    }

    /// Adds `spent` to what `owed` holds (drained at `cores` per second since it was last
    /// charged); the rest that drains it all, once it is over the slack.
    pub(super) fn charge(
        owed: &Mutex<Option<(Instant, Duration)>>,
        spent: Duration,
        now: Instant,
        cores: f64,
    ) -> Option<Duration> {
        let mut owed = owed.lock().unwrap_or_else(|e| e.into_inner());
        let before = owed.map_or(Duration::ZERO, |(at, owed)| {
            owed.saturating_sub(now.saturating_duration_since(at).mul_f64(cores))
        });
        let after = before.saturating_add(spent);
        *owed = Some((now, after));
        (after > SLACK).then(|| after.div_f64(cores))
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

    /// Lowered threads running flat out together get their ration, however many they are:
    /// each charge past the slack is answered with the rest that pays it off.
    #[test]
    fn lowered_work_is_rationed_to_its_cores() {
        use std::time::{Duration, Instant};
        let owed = std::sync::Mutex::new(None);
        let start = Instant::now();
        let (mut now, mut worked) = (start, Duration::ZERO);
        let slice = Duration::from_micros(300);
        // Two threads taking turns, 300 us of work each time, resting when told.
        for _ in 0..2_000 {
            for _thread in 0..2 {
                worked += slice;
                now += slice / 2;
                if let Some(rest) = lowered_budget::charge(&owed, slice, now, 0.5) {
                    assert!(rest <= Duration::from_millis(5), "{rest:?}");
                    now += rest;
                }
            }
        }
        let cores = worked.as_secs_f64() / (now - start).as_secs_f64();
        assert!((0.45..=0.55).contains(&cores), "{cores} cores");
        // Work under the ration is never told to rest.
        let owed = std::sync::Mutex::new(None);
        let mut now = Instant::now();
        for _ in 0..1_000 {
            now += Duration::from_millis(1);
            assert_eq!(lowered_budget::charge(&owed, slice, now, 0.5), None);
        }
    }
}
