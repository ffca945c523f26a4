//! Ordinary work in flight: the requests being answered at normal priority right now, which
//! lowered threads wait for ([`defer_to_ordinary_work`], from [`super::offer_core`]) before they
//! go on. A lower priority decides who gets a free core first; it does not keep lowered work
//! from running on the other core while a lookup runs on this one, and on two cores (measured
//! under the attack benchmark) that alone stretched a lookup's 99th percentile by half. So
//! lowered work runs in the gaps between ordinary requests, waiting at most [`MOST_DEFERRED`] at
//! each offer so it still ends however busy the server is.
//!
//! The API marks a request as ordinary with [`ordinary`] (a task-local scope); a part of it
//! that runs at low priority after all (`crate::store::low_priority::scope`, for an operation
//! found costly once parsed) steps aside ([`StepAside`]) while it does.

use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Ordinary requests in flight, process-wide.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// The longest a lowered thread waits, at one offer, for ordinary work to end.
pub const MOST_DEFERRED: Duration = Duration::from_millis(2);

/// How often a waiting lowered thread looks again.
const LOOK_EVERY: Duration = Duration::from_micros(100);

tokio::task_local! {
    /// Whether this task's request counts as ordinary work now (false while it steps aside).
    static COUNTED: Cell<bool>;
}

/// Ordinary requests in flight now.
pub fn ordinary_in_flight() -> usize {
    IN_FLIGHT.load(Ordering::Relaxed)
}

/// Runs `future` (a request answered at normal priority) as ordinary work: lowered threads
/// defer to it while it runs, unless it steps aside.
pub async fn ordinary<F: Future>(future: F) -> F::Output {
    COUNTED
        .scope(Cell::new(false), async {
            let _counted = Counting::start();
            future.await
        })
        .await
}

/// Counts the calling task's request as ordinary work until dropped.
struct Counting;

impl Counting {
    fn start() -> Self {
        set_counted(true);
        Self
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        set_counted(false);
    }
}

/// Marks the calling task's request counted or not, moving [`IN_FLIGHT`] when that changes;
/// the previous mark (false outside [`ordinary`]).
fn set_counted(counted: bool) -> bool {
    COUNTED
        .try_with(|cell| {
            let was = cell.replace(counted);
            match (was, counted) {
                (false, true) => {
                    IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
                }
                (true, false) => {
                    IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
                }
                _ => {}
            }
            was
        })
        .unwrap_or(false)
}

/// While held, the calling task's request is not counted as ordinary work (it runs at low
/// priority for a while); dropping it counts it again if it was.
pub struct StepAside {
    was_counted: bool,
}

impl StepAside {
    /// Steps the calling task's request aside (nothing outside [`ordinary`]).
    pub fn new() -> Self {
        Self {
            was_counted: set_counted(false),
        }
    }
}

impl Default for StepAside {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for StepAside {
    fn drop(&mut self) {
        if self.was_counted {
            set_counted(true);
        }
    }
}

/// Waits while ordinary requests are in flight, looking every [`LOOK_EVERY`], for at most
/// [`MOST_DEFERRED`]; how long it waited. Only lowered threads call this (a blocking sleep).
pub(super) fn defer_to_ordinary_work() -> Duration {
    let started = Instant::now();
    while ordinary_in_flight() > 0 && started.elapsed() < MOST_DEFERRED {
        std::thread::sleep(LOOK_EVERY);
    }
    started.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test touches the process-wide count, so none races another over it.
    #[tokio::test]
    async fn ordinary_work_is_counted_while_it_runs_and_not_while_it_steps_aside() {
        let before = ordinary_in_flight();
        let (inside, aside, back) = ordinary(async {
            let inside = ordinary_in_flight();
            let aside = {
                let _aside = StepAside::new();
                tokio::task::yield_now().await;
                ordinary_in_flight()
            };
            (inside, aside, ordinary_in_flight())
        })
        .await;
        assert_eq!((inside, aside, back), (before + 1, before, before + 1));
        assert_eq!(ordinary_in_flight(), before, "uncounted once it ends");
        // Outside a request, stepping aside changes nothing.
        drop(StepAside::new());
        assert_eq!(ordinary_in_flight(), before);

        // A request dropped midway (its client went away) is uncounted too.
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let pending = tokio::spawn(ordinary(async move {
            let _ = started_tx.send(());
            std::future::pending::<()>().await;
        }));
        started_rx.await.unwrap();
        assert_eq!(ordinary_in_flight(), before + 1);
        // A lowered thread waits for it, but no longer than its longest deferral.
        let waited = tokio::task::spawn_blocking(defer_to_ordinary_work)
            .await
            .unwrap();
        assert!(waited >= MOST_DEFERRED, "{waited:?}");
        pending.abort();
        let _ = pending.await;
        assert_eq!(ordinary_in_flight(), before);
    }
}
