//! A thread's scheduling as the kernel's `sched_setattr` sets it: its nice value together with
//! its time slice, the one setting neither the standard library nor rustix reaches.
//!
//! Why a slice. Under the EEVDF scheduler (Linux 6.6 and later) a thread that wakes does not
//! take a core from a running one of lower priority at once: the running thread keeps it for
//! the rest of its slice (about 3 ms here), whatever its nice value. A lookup waiting behind a
//! nice-19 database read waits that long. Since Linux 6.12 a thread may ask for a shorter slice
//! (down to 0.1 ms), after which any waiting thread with an earlier deadline, which an ordinary
//! thread always has against a nice-19 one, gets the core. Older kernels take the nice value and
//! ignore the slice.
//!
//! This is the workspace's only `unsafe`: one system call with a plain struct, below.

use std::io;
use std::time::Duration;

/// The shortest slice the kernel accepts; shorter ones are raised to it.
pub const SHORTEST_SLICE: Duration = Duration::from_micros(100);

/// Gives the calling thread the normal scheduling policy with `nice` and a time slice of
/// `slice` (the kernel keeps it within 0.1 ms and 100 ms).
#[cfg(target_os = "linux")]
pub fn set_this_thread(nice: i32, slice: Duration) -> io::Result<()> {
    linux::set_this_thread(nice, slice)
}

/// Not available off Linux: says so.
#[cfg(not(target_os = "linux"))]
pub fn set_this_thread(_nice: i32, _slice: Duration) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "thread time slices are a Linux setting",
    ))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::time::Duration;

    /// The kernel's `struct sched_attr` in its first form (48 bytes, `SCHED_ATTR_SIZE_VER0`),
    /// which every kernel since 3.14 reads.
    #[repr(C)]
    struct SchedAttr {
        size: u32,
        sched_policy: u32,
        sched_flags: u64,
        sched_nice: i32,
        sched_priority: u32,
        sched_runtime: u64,
        sched_deadline: u64,
        sched_period: u64,
    }

    /// `SCHED_OTHER`, the normal policy.
    const SCHED_OTHER: u32 = 0;

    pub(super) fn set_this_thread(nice: i32, slice: Duration) -> io::Result<()> {
        let attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: SCHED_OTHER,
            sched_flags: 0,
            sched_nice: nice,
            sched_priority: 0,
            // For the normal policy the kernel reads the runtime as the thread's slice.
            sched_runtime: u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX),
            sched_deadline: 0,
            sched_period: 0,
        };
        // SAFETY: `sched_setattr(0, attr, 0)` reads `attr.size` bytes from `attr`, a live,
        // initialised `repr(C)` value of exactly that size laid out as the kernel's
        // `struct sched_attr`; it writes nothing back and keeps no pointer. Thread 0 is the
        // calling one, so no other thread is touched.
        let result = unsafe {
            libc::syscall(
                libc::SYS_sched_setattr,
                0 as libc::pid_t,
                &attr as *const SchedAttr,
                0 as libc::c_uint,
            )
        };
        if result == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_attribute_struct_is_the_kernels_first_form() {
            assert_eq!(std::mem::size_of::<SchedAttr>(), 48);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The nice value the kernel reports for the calling thread (field 19 of its `stat`).
    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        fields[19 - 3].parse().unwrap()
    }

    /// The calling thread's slice in nanoseconds, as the kernel reports it (since 6.6).
    fn own_slice() -> Option<u64> {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.rsplit(' ').next()?.trim().parse().ok()
    }

    /// Whether the running kernel takes a thread's own slice (6.12 and later).
    fn takes_custom_slices() -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut numbers = release
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse::<u32>().unwrap_or(0));
        let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
        (major, minor) >= (6, 12)
    }

    #[test]
    fn a_thread_sets_its_own_nice_value_and_slice_and_no_one_elses() {
        let before = (own_nice(), own_slice());
        std::thread::spawn(|| {
            set_this_thread(19, SHORTEST_SLICE).expect("lowering a thread needs no privilege");
            assert_eq!(own_nice(), 19);
            if takes_custom_slices() {
                assert_eq!(own_slice(), Some(SHORTEST_SLICE.as_nanos() as u64));
            }
        })
        .join()
        .unwrap();
        assert_eq!(
            (own_nice(), own_slice()),
            before,
            "the test's own thread is untouched"
        );
    }
}
