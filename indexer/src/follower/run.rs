//! The loop around [`Follower::step`]: it reports each outcome, pauses when the chain is synced
//! or a step failed (with backoff), stops on a fatal error, and answers a shutdown at once, even
//! mid-request, after letting the queued batches land.

use super::{Follower, FollowerError, Outcome};
use std::time::Duration;
use tokio::sync::watch;

impl Follower {
    /// Runs steps until `until_block` (or, with `exit_when_synced`, the head) is indexed, a fatal
    /// error, or `shutdown` turns true (at once, even mid-request). Other errors are logged and
    /// retried with backoff.
    pub async fn run(
        mut self,
        exit_when_synced: bool,
        mut shutdown: watch::Receiver<bool>,
        mut progress: impl FnMut(&str, &Outcome),
    ) -> Result<(), FollowerError> {
        let poll = Duration::from_millis(self.config.poll_interval_ms);
        let mut failures = 0u32;
        loop {
            if *shutdown.borrow() {
                return self.drain().await;
            }
            // A step waits on the network (retries, backoff, a slow provider); a shutdown must
            // not wait for it. Dropping the step is safe: what it fetched is fetched again, and
            // a batch it handed to the writer commits whole or not at all.
            let stepped = tokio::select! {
                stepped = self.step() => stepped,
                _ = stop_requested(&mut shutdown) => continue,
            };
            let health = self.rpc.health();
            match &stepped {
                Ok(_) => health.step_succeeded(),
                Err(error) => health.step_failed(&error.to_string(), error.is_fatal()),
            }
            let pause = match stepped {
                Ok(outcome) => {
                    failures = 0;
                    progress(&self.config.name, &outcome);
                    match outcome {
                        Outcome::Done => return Ok(()),
                        Outcome::Synced { .. } if exit_when_synced => return Ok(()),
                        Outcome::Synced { .. } => Some(poll),
                        Outcome::Rewound { ancestor, removed } => {
                            tracing::warn!(target: "agentindex::follower", chain = %self.config.name, ancestor, removed, "reorg undone");
                            None
                        }
                        Outcome::Indexed { .. } | Outcome::Retry => None,
                    }
                }
                Err(error) if error.is_fatal() => return Err(error),
                Err(error) => {
                    failures += 1;
                    let wait = backoff(failures);
                    tracing::warn!(target: "agentindex::follower", %error, retry_in = ?wait, "step failed");
                    Some(wait)
                }
            };
            if let Some(pause) = pause {
                rest(&mut shutdown, pause).await;
            }
        }
    }
}

/// How long a follower waits after `failures` failed steps in a row: from half a second,
/// doubling, at most 30 s.
pub(super) fn backoff(failures: u32) -> Duration {
    Duration::from_millis((250u64 << failures.min(7)).min(30_000))
}

/// Waits `pause`, or until `shutdown` changes.
pub(super) async fn rest(shutdown: &mut watch::Receiver<bool>, pause: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(pause) => {}
        _ = shutdown.changed() => {}
    }
}

/// Resolves once `shutdown` is true; never when its sender is gone (no stop can come then).
async fn stop_requested(shutdown: &mut watch::Receiver<bool>) {
    if shutdown.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}
