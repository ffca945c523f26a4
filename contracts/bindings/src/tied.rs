//! Child processes that cannot outlive the process that started them.
//!
//! `Drop` alone does not keep that promise: a process killed by SIGKILL (an OOM killer, a CI
//! timeout, a test harness) runs no destructor, and anvil or a server it started would run on.
//! `PR_SET_PDEATHSIG` needs `unsafe` and fires when the spawning *thread* exits (tokio's blocking
//! threads do), so a tied process is held by a pipe instead: a small `sh` forks a watcher that
//! reads the pipe, then `exec`s the program, so the program keeps the pid [`TiedChild::id`]
//! reports. Only this process holds the pipe's write end; however it ends, the kernel closes it,
//! the watcher reads end-of-file and stops the program: SIGTERM, then SIGKILL after the grace
//! period. [`TiedChild::stop`] and `Drop` close the pipe on purpose, so every way out takes the
//! same path.
//!
//! The watcher is the program's child, so it signals `$$` only while its own parent is still
//! `$$`: once the program has exited the watcher has been handed to another parent, and a pid
//! the kernel may since have reused is left alone.

use std::ffi::OsStr;
use std::io;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// `sh -c` script: `$1` is the grace period in whole seconds, the rest is the program and its
/// arguments. fd 3 keeps the pipe for the watcher; the program gets `/dev/null` as its stdin
/// and no copy of the pipe. The watcher's output goes nowhere, so it never holds a pipe the
/// caller reads to end-of-file.
const KEEPER: &str = r#"grace=$1; shift
exec 3<&0 </dev/null
(
  trap '' HUP INT
  read -r _ <&3
  program_runs() { read -r _ _ _ parent _ </proc/self/stat; [ "$parent" = "$$" ]; }
  program_runs || exit 0
  kill -TERM $$
  ticks=$((grace * 10))
  while [ $ticks -gt 0 ]; do
    sleep 0.1
    program_runs || exit 0
    ticks=$((ticks - 1))
  done
  kill -KILL $$
) >/dev/null 2>&1 &
exec 3<&-
exec "$@""#;

/// How long after the grace period [`TiedChild::stop`] waits for the watcher's SIGKILL to land
/// before sending its own.
const WATCHER_SLACK: Duration = Duration::from_secs(2);

/// A command whose program will be tied to this process. Set its arguments, environment,
/// directory, stdout and stderr through [`TiedCommand::command`]; its stdin is the tie.
#[derive(Debug)]
pub struct TiedCommand {
    command: Command,
    grace: Duration,
}

impl TiedCommand {
    /// `program`, given `grace` between SIGTERM and SIGKILL when it is stopped (rounded up to
    /// whole seconds, at least one).
    pub fn new(program: impl AsRef<OsStr>, grace: Duration) -> Self {
        let seconds = grace.as_secs() + u64::from(grace.subsec_nanos() > 0);
        let grace = Duration::from_secs(seconds.max(1));
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(KEEPER)
            .arg("tied")
            .arg(grace.as_secs().to_string())
            .arg(program);
        Self { command, grace }
    }

    /// The command, to add arguments and set the environment, directory and output. Its stdin
    /// is replaced when it is spawned.
    pub fn command(&mut self) -> &mut Command {
        &mut self.command
    }

    /// Starts the program, tied to this process.
    pub fn spawn(mut self) -> io::Result<TiedChild> {
        let mut child = self.command.stdin(Stdio::piped()).spawn()?;
        let tie = child.stdin.take();
        Ok(TiedChild {
            child,
            tie,
            grace: self.grace,
        })
    }
}

/// A running tied program. Dropping it stops the program as [`TiedChild::stop`] does.
#[derive(Debug)]
pub struct TiedChild {
    child: Child,
    /// The write end of the watcher's pipe; closing it stops the program.
    tie: Option<ChildStdin>,
    grace: Duration,
}

impl TiedChild {
    /// The program's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The program's process, to take its stdout or stderr, poll it or kill it outright. Its
    /// stdin is the tie and is not there.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Stops the program and returns how it exited: SIGTERM, then SIGKILL if it is still running
    /// after the grace period. Returns at once if it has already exited.
    pub fn stop(&mut self) -> io::Result<ExitStatus> {
        // Closing the pipe is the signal: the watcher sends SIGTERM, then SIGKILL.
        drop(self.tie.take());
        let deadline = Instant::now() + self.grace + WATCHER_SLACK;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                // The watcher is gone (someone killed it): do its job.
                self.child.kill()?;
                return self.child.wait();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl TiedChild {
    /// Waits for the program to end by itself and returns how it exited with all it wrote to
    /// its stdout and stderr (those that were piped), as `std`'s `wait_with_output` does. If
    /// this process dies first, the tie still stops the program.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        let stderr = self.child.stderr.take().map(|mut pipe| {
            // Read beside stdout, so neither pipe fills while the other is read.
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut pipe, &mut bytes).map(|_| bytes)
            })
        });
        let mut stdout = Vec::new();
        if let Some(mut pipe) = self.child.stdout.take() {
            io::Read::read_to_end(&mut pipe, &mut stdout)?;
        }
        let stderr = match stderr {
            Some(reader) => reader
                .join()
                .map_err(|_| io::Error::other("the stderr reader panicked"))??,
            None => Vec::new(),
        };
        let status = self.child.wait()?;
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }
}

impl Drop for TiedChild {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn tied(script: &str, grace: Duration) -> TiedChild {
        let mut command = TiedCommand::new("sh", grace);
        command.command().args(["-c", script]);
        command.spawn().unwrap()
    }

    #[test]
    fn the_program_runs_as_the_spawned_pid() {
        let mut command = TiedCommand::new("sh", Duration::from_secs(1));
        command
            .command()
            .args(["-c", "echo $$"])
            .stdout(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut printed = String::new();
        let mut stdout = child.child().stdout.take().unwrap();
        io::Read::read_to_string(&mut stdout, &mut printed).unwrap();
        assert_eq!(printed.trim(), child.id().to_string());
    }

    #[test]
    fn waiting_for_output_reads_both_pipes_to_the_end() {
        let mut command = TiedCommand::new("sh", Duration::from_secs(1));
        // More than a pipe holds on stderr, so reading stdout alone first would hang.
        command
            .command()
            .args(["-c", "head -c 200000 /dev/zero >&2; echo out; exit 3"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = command.spawn().unwrap().wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(output.stderr.len(), 200_000);
    }

    #[test]
    fn stopping_sends_sigterm() {
        let mut child = tied("exec sleep 30", Duration::from_secs(5));
        let started = Instant::now();
        let status = child.stop().unwrap();
        assert_eq!(status.signal(), Some(15), "{status}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_the_grace_period() {
        let mut command = TiedCommand::new("sh", Duration::from_secs(1));
        command
            .command()
            .args([
                "-c",
                "trap '' TERM; echo ready; while :; do sleep 0.1; done",
            ])
            .stdout(Stdio::piped());
        let mut child = command.spawn().unwrap();
        // Stopped before its trap is set, it would simply die of the SIGTERM.
        let stdout = child.child().stdout.take().unwrap();
        let mut ready = String::new();
        io::BufRead::read_line(&mut io::BufReader::new(stdout), &mut ready).unwrap();
        assert_eq!(ready, "ready\n");
        let started = Instant::now();
        let status = child.stop().unwrap();
        assert_eq!(status.signal(), Some(9), "{status}");
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_program_that_exited_is_left_alone() {
        let mut child = tied("exit 3", Duration::from_secs(1));
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.child().try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "exit 3 still running");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(child.stop().unwrap().code(), Some(3));
    }
}
