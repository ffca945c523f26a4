//! Processes as `/proc` shows them, for tests that check what a process leaves running.

use std::time::{Duration, Instant};

/// One process, told apart from a later one that reuses its pid by its start time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Process {
    pub(crate) pid: u32,
    /// The executable's name (`comm`), such as `anvil`.
    pub(crate) name: String,
    /// Clock ticks after boot at which it started.
    started: u64,
}

/// What `/proc/PID/stat` says about a process.
struct Stat {
    name: String,
    state: char,
    parent: u32,
    started: u64,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `PID (NAME) STATE PPID …`: the name may hold spaces and parentheses, so split at the last
    // `)`; the start time is the 22nd field, the 20th after the name.
    let (head, rest) = text.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        name,
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        started: fields.get(19)?.parse().ok()?,
    })
}

/// The processes whose parent is `parent`.
pub(crate) fn children_of(parent: u32) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = stat(pid)?;
            (stat.parent == parent).then_some(Process {
                pid,
                name: stat.name,
                started: stat.started,
            })
        })
        .collect()
}

impl Process {
    /// Whether it is still running: not exited (a zombie waiting for its parent counts as
    /// exited) and its pid not taken by another process since.
    pub(crate) fn running(&self) -> bool {
        stat(self.pid)
            .is_some_and(|now| now.started == self.started && !matches!(now.state, 'Z' | 'X'))
    }

    /// Waits until it is no longer [`running`](Self::running); false if it still is after
    /// `limit`.
    pub(crate) fn gone_within(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while self.running() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}
