//! What one step of the Cardano follower reads: the registry policies' runs after those already
//! read and the payment contracts' transactions from the next height on, at most a batch of
//! transactions in whole blocks, then each transaction's place, inputs and outputs (and, for
//! registry transactions, metadata), decoded into registry and escrow actions.

use super::FollowerError;
use super::cardano::CardanoFollower;
use crate::cardano::source::{CardanoSource, TxPlace};
use crate::cardano::{escrow, registry};
use crate::store::{CardanoTx, StoreRead};
use alloy::primitives::B256;
use std::collections::BTreeMap;

/// Items asked of the provider at once (its largest page).
const PAGE: u32 = 100;

/// A transaction to read: where it is, the policy runs listed for it.
struct Wanted {
    hash: B256,
    place: Option<TxPlace>,
    runs: Vec<String>,
}

impl<S: CardanoSource> CardanoFollower<S> {
    /// The transactions from height `next` on, at most a batch of them in whole blocks, and the
    /// last height they cover (the tip when both lists ran out first).
    pub(super) async fn transactions(
        &self,
        next: u64,
        tip: u64,
    ) -> Result<(Vec<CardanoTx>, u64), FollowerError> {
        let mut wanted: BTreeMap<(u64, u32), Wanted> = BTreeMap::new();
        let mut to = self.registry_runs(next, tip, &mut wanted).await?;
        to = self.escrow_transactions(next, to, &mut wanted).await?;
        // A later list may have lowered `to` below transactions an earlier one took.
        wanted.retain(|(height, _), _| *height <= to);
        let chain_id = self.config.chain_id();
        let mut txs = Vec::with_capacity(wanted.len());
        for wanted in wanted.into_values() {
            let place = match wanted.place {
                Some(place) => place,
                None => self.place(wanted.hash).await?,
            };
            let (actions, escrow) = if place.valid {
                let utxos = self
                    .source
                    .utxos(place.hash)
                    .await
                    .map_err(|e| self.provider(e))?;
                let actions = if wanted.runs.is_empty() {
                    Vec::new()
                } else {
                    let metadata = self
                        .source
                        .metadata(place.hash)
                        .await
                        .map_err(|e| self.provider(e))?;
                    registry::actions(chain_id, &place, &utxos, &metadata, &self.policies)
                };
                let escrow =
                    escrow::escrow_actions(chain_id, &place, &utxos, &self.escrows, &self.policies);
                (actions, escrow)
            } else {
                (Vec::new(), Vec::new())
            };
            txs.push(CardanoTx {
                place,
                runs: wanted.runs,
                actions,
                escrow,
            });
        }
        Ok((txs, to))
    }

    /// Adds the registry policies' runs from height `next` up to `to` (lowered to keep a batch
    /// whole blocks of at most `transactions_per_batch`); returns `to`.
    async fn registry_runs(
        &self,
        next: u64,
        mut to: u64,
        wanted: &mut BTreeMap<(u64, u32), Wanted>,
    ) -> Result<u64, FollowerError> {
        let read = self
            .store
            .script_runs(self.config.chain_id())
            .await
            .map_err(|e| self.store_error(e))?;
        let limit = self.config.transactions_per_batch;
        for policy in &self.policies {
            let mut skip = read.get(&policy.policy_id).copied().unwrap_or(0);
            'pages: loop {
                let hashes = self
                    .source
                    .script_transactions(&policy.policy_id, skip, PAGE)
                    .await
                    .map_err(|e| self.provider(e))?;
                let last_page = hashes.len() < PAGE as usize;
                for hash in hashes {
                    let known = wanted
                        .values()
                        .find(|w| w.hash == hash)
                        .and_then(|w| w.place);
                    let place = match known {
                        Some(place) => place,
                        None => self.place(hash).await?,
                    };
                    if place.height < next {
                        return Err(self.moved(
                            "the provider lists a policy run below the indexed height that was never read",
                        ));
                    }
                    if place.height > to {
                        break 'pages;
                    }
                    wanted
                        .entry((place.height, place.index))
                        .or_insert(Wanted {
                            hash,
                            place: Some(place),
                            runs: Vec::new(),
                        })
                        .runs
                        .push(policy.policy_id.clone());
                    skip += 1;
                    if wanted.len() >= limit {
                        // Take the rest of this block, then stop.
                        to = place.height;
                    }
                }
                if last_page {
                    break;
                }
            }
        }
        Ok(to)
    }

    /// Adds the payment contracts' transactions in blocks `next..=to` (lowered to keep a batch
    /// whole blocks of at most `transactions_per_batch` escrow transactions); returns `to`.
    async fn escrow_transactions(
        &self,
        next: u64,
        mut to: u64,
        wanted: &mut BTreeMap<(u64, u32), Wanted>,
    ) -> Result<u64, FollowerError> {
        let limit = self.config.transactions_per_batch;
        let mut taken = 0usize;
        for contract in &self.escrows {
            let mut page = 1;
            'pages: loop {
                let found = self
                    .source
                    .address_transactions(&contract.address, next, to, page)
                    .await
                    .map_err(|e| self.provider(e))?;
                let last_page = found.len() < PAGE as usize;
                for tx in found {
                    if tx.height > to {
                        break 'pages;
                    }
                    let entry = wanted.entry((tx.height, tx.index)).or_insert(Wanted {
                        hash: tx.hash,
                        place: None,
                        runs: Vec::new(),
                    });
                    if entry.hash != tx.hash {
                        return Err(self.moved("two transactions listed at one place"));
                    }
                    taken += 1;
                    if taken >= limit {
                        to = tx.height;
                    }
                }
                if last_page {
                    break;
                }
                page += 1;
            }
        }
        Ok(to)
    }

    /// Where `hash` is; an error when the chain no longer holds it (a rollback under way).
    async fn place(&self, hash: B256) -> Result<TxPlace, FollowerError> {
        self.source
            .transaction(hash)
            .await
            .map_err(|e| self.provider(e))?
            // Listed but gone: the chain is rolling back under us.
            .ok_or_else(|| self.moved("a listed transaction vanished"))
    }
}
