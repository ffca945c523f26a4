//! What a process uses, read from `/proc` (Linux): its peak resident memory while sampled, and
//! the processor time its threads took, split by priority.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A field of `/proc/PID/status` in KiB (`VmRSS`, `RssAnon`).
pub(crate) fn memory_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The highest resident memory seen, in KiB: in all (`VmRSS`), and the process's own
/// (`RssAnon`: heap and stacks), without the pages of the database file its readers map
/// (`RssFile`, the operating system's page cache, which it takes back under pressure).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Peaks {
    pub(crate) resident: u64,
    pub(crate) anonymous: u64,
}

impl Peaks {
    /// The higher of each.
    pub(crate) fn max(self, other: Peaks) -> Peaks {
        Peaks {
            resident: self.resident.max(other.resident),
            anonymous: self.anonymous.max(other.anonymous),
        }
    }
}

/// Samples `pid`'s resident memory every 50 ms until `stop`; returns the highest seen.
pub(crate) fn sample_memory(pid: u32, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<Peaks> {
    tokio::spawn(async move {
        let mut peaks = Peaks::default();
        while !stop.load(Ordering::Relaxed) {
            peaks.resident = peaks.resident.max(memory_kib(pid, "VmRSS:").unwrap_or(0));
            peaks.anonymous = peaks
                .anonymous
                .max(memory_kib(pid, "RssAnon:").unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        peaks
    })
}

/// Processor time in seconds from a `/proc/.../stat` line: user plus system (fields 14 and 15,
/// in clock ticks of 1/100 s), and the nice value (field 19).
fn cpu_and_nice(stat: &str) -> Option<(f64, i64)> {
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let ticks = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    let nice = fields.get(19 - 3)?.parse().ok()?;
    Some(((ticks(14)? + ticks(15)?) as f64 / 100.0, nice))
}

/// A process's processor time so far, in seconds: in all (threads that ended included), and
/// on its lowered threads (nice above 0) still running.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Cpu {
    pub(crate) total: f64,
    pub(crate) lowered: f64,
}

impl Cpu {
    /// `pid`'s now.
    pub(crate) fn of(pid: u32) -> Cpu {
        let total = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| cpu_and_nice(&stat))
            .map_or(0.0, |(cpu, _)| cpu);
        let lowered = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
            .filter_map(|stat| cpu_and_nice(&stat))
            .filter(|(_, nice)| *nice > 0)
            .map(|(cpu, _)| cpu)
            .sum();
        Cpu { total, lowered }
    }

    /// The time taken from `before` to this reading.
    pub(crate) fn since(self, before: Cpu) -> Cpu {
        Cpu {
            total: self.total - before.total,
            lowered: self.lowered - before.lowered,
        }
    }

    /// The sum of two spans' times.
    pub(crate) fn plus(self, other: Cpu) -> Cpu {
        Cpu {
            total: self.total + other.total,
            lowered: self.lowered + other.lowered,
        }
    }
}
