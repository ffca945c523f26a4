//! One step's decision: where the follower stands (the stored cursor, or the end of the newest
//! queued batch), what the chain holds (its head and finalized block), and so which work comes
//! next: a backfill range, a run at the tip, a reorg to undo, or nothing. The first step also
//! checks which endpoints serve the configured chain (every one asked at once, those serving
//! another left out) and, when no start block is configured, finds it.

use super::{Follower, FollowerError, Outcome, SourceMap, deployment_block};
use crate::config::{Finality, StartBlock};
use crate::rpc::ChainCheck;
use crate::store::StoreRead;
use alloy::eips::BlockNumberOrTag;
use std::time::Duration;

/// Blocks the node's `finalized` tag is assumed to trail the head by when it has no such tag.
const FALLBACK_FINALITY_DEPTH: u64 = 64;

impl Follower {
    /// One unit of work: a backfill range, a tip run, or a reorg undone.
    pub async fn step(&mut self) -> Result<Outcome, FollowerError> {
        if !self.chain_checked {
            match self.rpc.verify_endpoints(self.config.chain_id).await {
                ChainCheck::Serving => self.chain_checked = true,
                ChainCheck::WrongChain { actual } => {
                    return Err(FollowerError::WrongChain {
                        chain: self.config.name.clone(),
                        expected: self.config.chain_id,
                        actual,
                    });
                }
                ChainCheck::Unanswered(error) => return Err(self.rpc_error(error)),
            }
        }
        if self.start_to_find {
            self.find_start().await?;
        }
        // While batches are queued, the follower stands at the end of the newest one.
        let (next, indexed_hash) = match self.in_flight.back() {
            Some(queued) => (queued.to + 1, queued.to_hash),
            None => {
                let progress = self
                    .store
                    .progress(self.config.chain_id)
                    .await
                    .map_err(|e| self.store_error(e))?
                    .expect("init_chain created the cursor");
                (progress.next_block, progress.indexed_hash)
            }
        };
        let limit = self.until_block.unwrap_or(u64::MAX);
        if next > limit {
            return match self.in_flight.is_empty() {
                true => Ok(Outcome::Done),
                false => self.complete_oldest().await,
            };
        }
        let (head_block, finalized) = match self.seen_head {
            Some((head, finalized, at))
                if next <= finalized
                    && at.elapsed() < Duration::from_millis(self.config.poll_interval_ms) =>
            {
                (head, finalized)
            }
            _ => {
                let Some(head) = self
                    .rpc
                    .header(BlockNumberOrTag::Latest)
                    .await
                    .map_err(|e| self.rpc_error(e))?
                else {
                    return Ok(Outcome::Retry);
                };
                let finalized = self.finalized(head.number).await?;
                self.seen_head = Some((head, finalized, std::time::Instant::now()));
                (head, finalized)
            }
        };
        let head = head_block.number;
        if next > finalized && !self.in_flight.is_empty() {
            // Past backfill: let the queued batches land before looking at the tip.
            return self.complete_oldest().await;
        }
        if next > head {
            // Nothing new, unless the blocks we hold were replaced (a reorg at equal or lower
            // height brings no new block to notice it by).
            let replaced =
                next > head + 1 || indexed_hash.is_some_and(|hash| hash != head_block.hash);
            if replaced {
                return self.undo_reorg(finalized).await;
            }
            self.writer
                .record_heads(self.config.chain_id, head, finalized)
                .await
                .map_err(|e| self.store_error(e))?;
            return Ok(Outcome::Synced { head });
        }
        // A cursor left inside the unfinalized window may have been replaced since. (A queued
        // batch ends at a finalized block whose header was read along with its logs.)
        if let Some(expected) = indexed_hash
            && self.in_flight.is_empty()
            && next > 0
            && next <= finalized
            && self
                .header(next - 1)
                .await?
                .is_none_or(|b| b.hash != expected)
        {
            return self.undo_reorg(finalized).await;
        }
        if next <= finalized {
            self.backfill(next, finalized.min(limit), finalized, head)
                .await
        } else {
            self.follow_tip(
                next,
                head.min(limit),
                indexed_hash,
                finalized,
                Some(head_block),
            )
            .await
        }
    }

    /// Starts the chain at its Identity Registry's deployment block.
    async fn find_start(&mut self) -> Result<(), FollowerError> {
        let identity = self.config.erc8004.as_ref().and_then(|e| e.identity);
        let start = match identity {
            Some(address) => deployment_block(&self.rpc, address)
                .await
                .map_err(|e| self.rpc_error(e))?
                .ok_or_else(|| FollowerError::NotDeployed {
                    chain: self.config.name.clone(),
                    address,
                })?,
            None => 0,
        };
        tracing::info!(target: "agentindex::follower", chain = %self.config.name, start, "start block found: the Identity Registry's deployment");
        self.writer
            .init_chain(self.config.chain_id, &self.config.name, start)
            .await
            .map_err(|e| self.store_error(e))?;
        self.config.start_block = StartBlock::At(start);
        self.sources = SourceMap::from_config(&self.config);
        self.start_to_find = false;
        Ok(())
    }

    /// The finalized block at `head`: the configured depth below it, or the node's `finalized`
    /// tag ([`FALLBACK_FINALITY_DEPTH`] below the head when the node has no such tag).
    async fn finalized(&self, head: u64) -> Result<u64, FollowerError> {
        Ok(match self.config.finality {
            Finality::Depth(depth) => head.saturating_sub(depth),
            Finality::Tag => match self.rpc.header(BlockNumberOrTag::Finalized).await {
                Ok(Some(block)) => block.number.min(head),
                Ok(None) => head.saturating_sub(FALLBACK_FINALITY_DEPTH),
                Err(error) if !error.kind.is_retryable() => {
                    head.saturating_sub(FALLBACK_FINALITY_DEPTH)
                }
                Err(error) => return Err(self.rpc_error(error)),
            },
        })
    }
}
