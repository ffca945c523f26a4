//! Overlapping fetch and write during backfill: a batch handed to the writer is remembered here
//! while the next range is fetched, and confirmed afterwards. The follower's position is then the
//! end of the newest queued batch rather than the stored cursor.
//!
//! Anything but backfill (tip following, reorgs, status) first lets every queued batch land, so
//! it sees the store as it is. A failed write drops the batches queued after it (the writer
//! refuses them as out of order) and the follower starts again from the stored cursor.

use super::{Follower, FollowerError, Outcome};
use crate::metrics::metrics;
use crate::store::StoreRead;
use crate::store::{Batch, QueuedBatch};
use alloy::primitives::B256;

/// Batches handed to the writer and not yet confirmed, at most: one being written while the
/// next is fetched.
pub(super) const PIPELINE_DEPTH: usize = 2;

/// A batch handed to the writer.
#[derive(Debug)]
pub(super) struct InFlight {
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) to_hash: Option<B256>,
    pub(super) head: u64,
    queued: QueuedBatch,
}

impl Follower {
    /// Hands `batch` to the writer without waiting for it.
    pub(super) async fn submit(&mut self, batch: Batch, head: u64) -> Result<(), FollowerError> {
        let (from, to, to_hash) = (batch.from_block, batch.to_block, batch.to_hash);
        let queued = self
            .writer
            .submit(batch)
            .await
            .map_err(|e| self.store_error(e))?;
        self.in_flight.push_back(InFlight {
            from,
            to,
            to_hash,
            head,
            queued,
        });
        Ok(())
    }

    /// Waits for the oldest queued batch and reports it.
    pub(super) async fn complete_oldest(&mut self) -> Result<Outcome, FollowerError> {
        let Some(oldest) = self.in_flight.pop_front() else {
            return Ok(Outcome::Retry);
        };
        match oldest.queued.outcome().await {
            Ok(summary) => {
                metrics().log_range(self.config.chain_id, oldest.to + 1 - oldest.from);
                tracing::debug!(target: "agentindex::follower", chain = %self.config.name, from = oldest.from, to = oldest.to, events = summary.events, agents = summary.agents_refreshed, "applied");
                Ok(Outcome::Indexed {
                    from: oldest.from,
                    to: oldest.to,
                    events: summary.events,
                    head: oldest.head,
                })
            }
            Err(error) => {
                // Later batches build on this one; the writer refuses them, and what was
                // discovered in them is forgotten until fetched again.
                self.in_flight.clear();
                self.watched = self
                    .store
                    .watched(self.config.chain_id)
                    .await
                    .map_err(|e| self.store_error(e))?;
                Err(self.store_error(error))
            }
        }
    }

    /// Lets every queued batch land; returns the first failure.
    pub(super) async fn drain(&mut self) -> Result<(), FollowerError> {
        while !self.in_flight.is_empty() {
            self.complete_oldest().await?;
        }
        Ok(())
    }
}
