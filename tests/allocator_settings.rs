//! The binary runs its allocator with freed pages handed back after 1 ms (`src/allocator.rs`):
//! started without `MIMALLOC_PURGE_DELAY`, the running process has it set to 1, under the same
//! process id the test started (it ran itself again); an operator's own value is kept. Read from
//! the process's own environment (`/proc/PID/environ`) once it has announced its address.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// The purge delay in `pid`'s environment, if set.
fn purge_delay_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    environ
        .split(|b| *b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .find_map(|entry| entry.strip_prefix("MIMALLOC_PURGE_DELAY="))
        .map(str::to_string)
}

/// `agentindex serve` on an empty database, with `delay` in its environment (or none), once it
/// has announced its address: its process id and the delay it runs with.
fn served_with(dir: &std::path::Path, delay: Option<&str>) -> (u32, Option<String>) {
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"sqlite://{}\"\n\n[api]\nlisten = \"127.0.0.1:0\"\n",
            dir.join("a.db").display()
        ),
    )
    .unwrap();
    let mut tied = support::binary::command(&["serve", "--config"], &config);
    tied.command()
        .env_remove("MIMALLOC_PURGE_DELAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(delay) = delay {
        tied.command().env("MIMALLOC_PURGE_DELAY", delay);
    }
    let mut child = tied.spawn().unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.child().stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("http://127.0.0.1:"), "announced {line:?}");
    let running = purge_delay_of(pid);
    let _ = child.child().kill();
    (pid, running)
}

#[test]
fn the_binary_runs_its_allocator_with_a_short_purge_delay_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (_, delay) = served_with(dir.path(), None);
    assert_eq!(delay.as_deref(), Some("1"));
    let (_, delay) = served_with(dir.path(), Some("7"));
    assert_eq!(delay.as_deref(), Some("7"));
}
