//! Undoing a reorg: find the newest remembered block that is still canonical and have the store
//! remove everything above it. A reorg that replaced the whole window stops the chain, or rewinds
//! to the finalized block when `on_deep_reorg = "rewind"`.

use super::{Follower, FollowerError, Outcome};
use crate::config::DeepReorg;
use crate::store::StoreRead;

impl Follower {
    /// Finds the newest remembered block that is still canonical and undoes everything above it.
    pub(super) async fn undo_reorg(&mut self, finalized: u64) -> Result<Outcome, FollowerError> {
        let window = self
            .store
            .window(self.config.chain_id)
            .await
            .map_err(|e| self.store_error(e))?;
        let mut ancestor = None;
        for block in window.iter().rev() {
            if self
                .header(block.number)
                .await?
                .is_some_and(|b| b.hash == block.hash)
            {
                ancestor = Some(block.number);
                break;
            }
        }
        let ancestor = match (ancestor, self.config.on_deep_reorg) {
            (Some(number), _) => number,
            (None, DeepReorg::Rewind) => {
                let progress = self
                    .store
                    .progress(self.config.chain_id)
                    .await
                    .map_err(|e| self.store_error(e))?;
                let indexed = progress.map_or(0, |p| p.next_block.saturating_sub(1));
                finalized.min(indexed).min(
                    window
                        .first()
                        .map_or(u64::MAX, |b| b.number.saturating_sub(1)),
                )
            }
            (None, DeepReorg::Stop) => {
                return Err(FollowerError::DeepReorg {
                    chain: self.config.name.clone(),
                    window: self.config.reorg_window,
                    oldest: window.first().map_or(0, |b| b.number),
                    newest: window.last().map_or(0, |b| b.number),
                });
            }
        };
        // Inflows read for the funding lookback may be gone with the blocks undone.
        self.funding.forget();
        let removed = self
            .writer
            .rewind(self.context.clone(), ancestor)
            .await
            .map_err(|e| self.store_error(e))?;
        let newest = window.last().map_or(ancestor, |b| b.number);
        crate::metrics::metrics().reorg(self.config.chain_id, newest.saturating_sub(ancestor));
        self.watched = self
            .store
            .watched(self.config.chain_id)
            .await
            .map_err(|e| self.store_error(e))?;
        Ok(Outcome::Rewound { ancestor, removed })
    }
}
