//! Following the tip: a run of unfinalized blocks whose headers are read first, so the run is
//! taken only when it continues the indexed chain (else the reorg is undone) and every log it
//! holds comes from those very blocks (else it is read again).

use super::{Follower, FollowerError, Outcome};
use crate::primitives::BlockRef;

/// Most blocks one tip step covers (each needs its header).
const TIP_SPAN: u64 = 64;

impl Follower {
    /// Fetches the blocks from `next` up to `limit` (at most [`TIP_SPAN`] of them, and no more
    /// than the adaptive range allows) once their headers continue the indexed chain and each
    /// other, and queues them for the writer.
    pub(super) async fn follow_tip(
        &mut self,
        next: u64,
        limit: u64,
        indexed_hash: Option<alloy::primitives::B256>,
        finalized: u64,
        head_block: Option<BlockRef>,
    ) -> Result<Outcome, FollowerError> {
        let head = head_block.map_or(limit, |b| b.number);
        let (from, to) = (next, limit.min(next + self.range.size().min(TIP_SPAN) - 1));
        // All headers at once (the RPC layer bounds how many are in flight); the head's was
        // just read and is not asked for again.
        let this = &*self;
        let requests = (from..=to).map(|number| async move {
            match head_block.filter(|head| head.number == number) {
                Some(head) => Ok(Some(head)),
                None => this.header(number).await,
            }
        });
        let mut headers: Vec<BlockRef> = futures::future::try_join_all(requests)
            .await?
            .into_iter()
            .map_while(|header| header)
            .collect();
        let Some(first) = headers.first() else {
            return Ok(Outcome::Retry);
        };
        if indexed_hash.is_some_and(|h| h != first.parent_hash) {
            return self.undo_reorg(finalized).await;
        }
        if headers.windows(2).any(|w| w[1].parent_hash != w[0].hash) {
            // The head moved while we read it; read again.
            return Ok(Outcome::Retry);
        }
        let to = headers.last().map_or(from, |b| b.number);
        let Some((fetched, to, _)) = self.fetch(from, to, None).await? else {
            return Ok(Outcome::Retry);
        };
        headers.truncate((to - from + 1) as usize);
        let consistent = fetched.logs.iter().chain(&fetched.payments).all(|log| {
            let (Some(number), Some(hash)) = (log.block_number, log.block_hash) else {
                return false;
            };
            headers
                .get((number - from) as usize)
                .is_some_and(|b| b.hash == hash)
        });
        if !consistent {
            return Ok(Outcome::Retry);
        }
        let batch = self
            .assemble(from, to, fetched, headers, finalized, head)
            .await?;
        self.submit(batch, head).await?;
        self.complete_oldest().await
    }
}
