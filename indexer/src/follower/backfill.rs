//! Backfill: finalized ranges fetched one after another and queued for the writer, so the next
//! range is read while the last one is written (see `pipeline.rs`).

use super::{Follower, FollowerError, Outcome, pipeline};

impl Follower {
    /// Fetches ranges from `next` and queues them for the writer until the pipeline is full or
    /// `limit` is reached, then reports the oldest once it is written.
    pub(super) async fn backfill(
        &mut self,
        mut next: u64,
        limit: u64,
        finalized: u64,
        head: u64,
    ) -> Result<Outcome, FollowerError> {
        while self.in_flight.len() < pipeline::PIPELINE_DEPTH && next <= limit {
            let (from, to) = self.range.next(next, limit);
            let Some((fetched, to, anchor)) = self.fetch(from, to, Some(limit)).await? else {
                break;
            };
            let anchor = match anchor {
                Some(anchor) => anchor,
                None => match self.header(to).await? {
                    Some(anchor) => anchor,
                    None => break,
                },
            };
            let batch = self
                .assemble(from, to, fetched, vec![anchor], finalized, head)
                .await?;
            self.submit(batch, head).await?;
            next = to + 1;
        }
        self.complete_oldest().await
    }
}
