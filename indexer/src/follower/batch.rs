//! Turning a fetched range into the writer's [`Batch`]: its records, the window of headers it
//! ends with, and whether it settles the chain's progress; what the range discovered is watched
//! from then on.

use super::fetched::FetchedRange;
use super::{Follower, FollowerError, assemble};
use crate::primitives::BlockRef;
use crate::store::Batch;

impl Follower {
    /// Turns a fetched range into a batch for the writer, and starts watching what it
    /// discovered (later ranges need it before this batch is written).
    pub(super) async fn assemble(
        &mut self,
        from: u64,
        to: u64,
        mut fetched: FetchedRange,
        window: Vec<BlockRef>,
        finalized: u64,
        head: u64,
    ) -> Result<Batch, FollowerError> {
        for (agent, block) in &fetched.new_agents {
            let entry = self.watched.agents.entry(*agent).or_insert(*block);
            *entry = (*entry).min(*block);
        }
        for (payee, block) in &fetched.new_payment_addresses {
            let entry = self
                .watched
                .payment_addresses
                .entry(*payee)
                .or_insert(*block);
            *entry = (*entry).min(*block);
        }
        let funding = std::mem::take(&mut fetched.funding);
        let events = assemble::records(&self.rpc, &self.sources, fetched, &window)
            .await
            .map_err(|source| FollowerError::Assemble {
                chain: self.config.name.clone(),
                source,
            })?;
        Ok(Batch {
            chain: self.context.clone(),
            from_block: from,
            to_block: to,
            to_hash: window.last().filter(|b| b.number == to).map(|b| b.hash),
            events,
            cardano: Vec::new(),
            funding,
            window,
            window_from: (to + 1).saturating_sub(self.config.reorg_window),
            finalized,
            head,
            settles: to >= head || self.until_block.is_some_and(|until| to >= until),
        })
    }
}
