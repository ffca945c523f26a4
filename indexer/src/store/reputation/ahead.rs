//! Trust ranks computed ahead, off the writer ([`RanksAhead`]). The rank as of a new epoch `E`
//! goes into force a few blocks after `E` (`reputation::rollout`); computing it took 5.5-7.4 s at
//! 100,000 agents and 1,000,000 payments, which the batch that needed it waited for. Now the
//! first settle at or past `E` asks for it, a task computes it on a read snapshot once that
//! settle is committed, and the settle that stores it (the block before the first group goes
//! over) takes the result, waiting for the task if it is still running. The task computes exactly what the writer would (the same
//! function over the same rows: everything at or below `E`, settled), so the floats are equal;
//! where there is no result (a restart, a failed task, a reorg below `E`) the writer computes the
//! rank itself as before.

use super::trust;
use crate::reputation::{ReputationRules, TrustRank};
use crate::schema::chain_cursor;
use crate::store::decode::int;
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyPool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// A computed rank and the time it is computed at; `None` when the snapshot the task read did
/// not yet hold the epoch settled.
type Computed = StoreResult<Option<(TrustRank, u64)>>;

/// One chain's rank computed ahead, if any: asked for, or being computed.
#[derive(Default)]
pub struct RanksAhead {
    slot: Mutex<Option<Slot>>,
    /// Ranks the writer stored from a computation ahead (instead of computing them itself).
    used: AtomicU64,
}

impl std::fmt::Debug for RanksAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let epoch = self.lock().as_ref().map(|slot| slot.epoch);
        f.debug_struct("RanksAhead")
            .field("epoch", &epoch)
            .field("used", &self.used())
            .finish()
    }
}

struct Slot {
    epoch: u64,
    state: State,
}

enum State {
    /// Asked for by a settle not yet committed.
    Wanted {
        chain_id: u64,
        rules: Arc<ReputationRules>,
    },
    /// Being computed, or computed.
    Running(JoinHandle<Computed>),
}

impl RanksAhead {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Slot>> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many ranks the writer took from a computation ahead.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Asks for the rank of `chain_id` as of `epoch` under `rules`, to be computed once the
    /// settle asking is committed ([`RanksAhead::start`]). Nothing changes if it was asked for.
    pub(super) fn want(&self, chain_id: u64, epoch: u64, rules: &Arc<ReputationRules>) {
        let mut slot = self.lock();
        if slot.as_ref().is_some_and(|s| s.epoch == epoch) {
            return;
        }
        *slot = Some(Slot {
            epoch,
            state: State::Wanted {
                chain_id,
                rules: Arc::clone(rules),
            },
        });
    }

    /// Starts computing the rank asked for, if any, on a snapshot of `read`. Called by the writer
    /// after each commit, so the snapshot holds what the asking settle wrote.
    pub fn start(&self, read: &AnyPool) {
        let mut slot = self.lock();
        let Some(Slot { epoch, state }) = slot.take() else {
            return;
        };
        let state = match state {
            State::Wanted { chain_id, rules } => {
                let read = read.clone();
                let runtime = tokio::runtime::Handle::current();
                // A blocking thread: the rank's iterations hold a core for a second or more.
                State::Running(tokio::task::spawn_blocking(move || {
                    runtime.block_on(compute(&read, chain_id, epoch, &rules))
                }))
            }
            running => running,
        };
        *slot = Some(Slot { epoch, state });
    }

    /// Forgets a rank asked for or computed as of an epoch above `block` (the chain was rewound
    /// below it: its rows are gone).
    pub(super) fn forget_above(&self, block: u64) {
        let mut slot = self.lock();
        if slot.as_ref().is_some_and(|s| s.epoch > block) {
            *slot = None;
        }
    }

    /// The rank as of `epoch` computed ahead, waiting for it if it is still being computed;
    /// `None` when it was not started or could not be computed (the caller computes it). Either
    /// way nothing is left asked for that epoch.
    pub(super) async fn take(&self, epoch: u64) -> Option<(TrustRank, u64)> {
        let handle = {
            let mut slot = self.lock();
            match slot.take() {
                Some(Slot {
                    epoch: at,
                    state: State::Running(handle),
                }) if at == epoch => handle,
                Some(asked) if asked.epoch == epoch => return None,
                other => {
                    *slot = other;
                    return None;
                }
            }
        };
        match handle.await {
            Ok(Ok(Some(computed))) => {
                self.used.fetch_add(1, Ordering::Relaxed);
                Some(computed)
            }
            Ok(Ok(None)) => None,
            Ok(Err(error)) => {
                tracing::warn!(target: "agentindex::reputation", %error, epoch, "computing a trust rank ahead failed; the writer computes it");
                None
            }
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            Err(_) => None,
        }
    }
}

/// The rank of `chain_id` as of `epoch` on one snapshot of `read`, if that snapshot holds the
/// chain's reputation settled at or past the epoch (every counted payment at or below it).
async fn compute(read: &AnyPool, chain_id: u64, epoch: u64, rules: &ReputationRules) -> Computed {
    let started = std::time::Instant::now();
    let mut tx = crate::store::sql::snapshot_of(read).await?;
    let settled: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT settled_block FROM {chain_cursor_table} WHERE chain_id = $1",
        chain_cursor_table = chain_cursor::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_optional(&mut *tx)
    .await
    .context("reading how far reputation is settled")?;
    if settled.is_none_or(|settled| settled < int("epoch", epoch).unwrap_or(i64::MAX)) {
        return Ok(None);
    }
    let computed = trust::compute(&mut tx, chain_id, epoch, rules).await?;
    tx.rollback()
        .await
        .context("ending a snapshot for a trust rank")?;
    tracing::info!(
        target: "agentindex::reputation",
        chain_id,
        epoch,
        agents = computed.0.agents.len(),
        elapsed = ?started.elapsed(),
        "trust rank computed ahead"
    );
    Ok(Some(computed))
}
