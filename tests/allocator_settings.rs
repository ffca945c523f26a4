//! The binary runs its allocator with freed pages handed back after 1 ms (`src/allocator.rs`):
//! started without `MIMALLOC_PURGE_DELAY`, the running process has it set to 1, under the same
//! process id and name the test started (it ran its own file again); an operator's own value is
//! kept, under either of mimalloc's names. Read from the process's own environment
//! (`/proc/PID/environ`) and name (`/proc/PID/comm`) once it has announced its address.

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

/// What a served process runs with: its name and the purge delay in its environment.
#[derive(Debug, PartialEq)]
struct Running {
    name: String,
    purge_delay: Option<String>,
}

/// `agentindex serve` on an empty database, with `setting` (a variable and its value) in its
/// environment or none, once it has announced its address.
fn served_with(dir: &std::path::Path, setting: Option<(&str, &str)>) -> Running {
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
    if let Some((name, value)) = setting {
        tied.command().env(name, value);
    }
    let mut child = tied.spawn().unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.child().stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("http://127.0.0.1:"), "announced {line:?}");
    let running = Running {
        name: std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap()
            .trim()
            .to_string(),
        purge_delay: purge_delay_of(pid),
    };
    let _ = child.child().kill();
    running
}

#[test]
fn the_binary_runs_its_allocator_with_a_short_purge_delay_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let running = |delay: Option<&str>| Running {
        name: "agentindex".into(),
        purge_delay: delay.map(str::to_string),
    };
    assert_eq!(served_with(dir.path(), None), running(Some("1")));
    let own = Some(("MIMALLOC_PURGE_DELAY", "7"));
    assert_eq!(served_with(dir.path(), own), running(Some("7")));
    // mimalloc's old name for the delay, in lower case as mimalloc also reads it.
    let old_name = Some(("mimalloc_reset_delay", "0"));
    assert_eq!(served_with(dir.path(), old_name), running(None));
}
