//! Fetching the money trail of a range's payers: the payment tokens' transfers into each payer
//! in the blocks before it paid (the chain's `funding_lookback_blocks`), then into whoever sent
//! those, up to [`funding_trail::HOPS`](crate::reputation::funding_trail::HOPS) transfers back. Each hop is
//! one request per chunk of accounts (the account in `topics[2]`), over the blocks from the
//! earliest move's lookback to the latest move. What comes back is every inflow of those
//! accounts in their windows; the store keeps the ones the trail of a credited payment reaches
//! (`store/facts/funding.rs`), so an inflow fetched twice, or for a payment not credited, is
//! harmless.

use super::by_address::{Direction, transfer_side};
use super::funding_cache::{FundingCache, Missing};
use crate::reputation::funding_trail::{HOPS, Inflow, Move, moved_on, next_moves};
use crate::rpc::{ChainRpc, RpcError, RpcErrorKind};
use agentindex_contracts::TestUSDC as Token;
use alloy::primitives::{Address, B256, U256};
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use futures::future::try_join_all;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

/// The inflow a token `Transfer` log is, if it is one.
pub(super) fn inflow_of(log: &Log) -> Option<Inflow> {
    let data = &log.inner.data.data;
    if data.len() != 32 {
        return None;
    }
    Some(Inflow {
        token: log.inner.address,
        funder: transfer_side(log, Direction::OutOf)?,
        funded: transfer_side(log, Direction::Into)?,
        amount: U256::from_be_slice(data),
        block: log.block_number?,
        log_index: log.log_index?,
    })
}

/// The payments among `transfers` (those into one of `payees`), as moves of their payers.
pub(super) fn payer_moves<'l>(
    transfers: impl IntoIterator<Item = &'l Log>,
    payees: &BTreeSet<Address>,
) -> Vec<Move> {
    transfers
        .into_iter()
        .filter_map(inflow_of)
        .filter(|t| payees.contains(&t.funded) && t.funder != Address::ZERO)
        .map(|t| Move {
            account: t.funder,
            block: t.block,
            log_index: t.log_index,
            paid_block: t.block,
        })
        .collect()
}

/// How a follower looks back for funding: how far, in requests of at most how many blocks,
/// and what it read already.
#[derive(Debug, Default)]
pub(super) struct FundingLookback {
    /// Blocks before a move its account's inflows are read for (0: none).
    pub(super) blocks: u64,
    /// The widest block range one request asks for: the chain's `max_block_range`, lowered to
    /// what the provider accepted when it refused a wider one.
    pub(super) max_span: AtomicU64,
    /// What was read already.
    pub(super) cache: std::sync::Mutex<FundingCache>,
}

impl FundingLookback {
    /// Forgets what was read (the chain under it may have changed).
    pub(super) fn forget(&self) {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .forget();
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, FundingCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Every inflow, in `tokens`, of the accounts on the trail back from `payments`: one hop after
/// another, each asking only for the senders the previous hop's kept inflows name, and only
/// for the blocks `lookback` has not read yet.
pub(super) async fn trail_inflows(
    rpc: &ChainRpc,
    tokens: &[Address],
    chunk: usize,
    lookback: &FundingLookback,
    payments: Vec<Move>,
) -> Result<Vec<Inflow>, RpcError> {
    let mut found: BTreeMap<(u64, u64), Inflow> = BTreeMap::new();
    // Ranges come in chain order: no window of this range's trail, nor of a later one's,
    // reaches further back than each hop's lookback from its earliest payment.
    if let Some(earliest) = payments.iter().map(|m| m.block).min() {
        let reach = lookback.blocks.saturating_mul(HOPS as u64);
        lookback
            .cache()
            .forget_before(earliest.saturating_sub(reach), lookback.blocks);
    }
    let mut moves = payments;
    for _ in 0..HOPS {
        if moves.is_empty() || tokens.is_empty() || lookback.blocks == 0 {
            break;
        }
        let (missing, held) = {
            let cache = lookback.cache();
            (
                cache.missing(&moves, lookback.blocks),
                cache.inflows_for(&moves, lookback.blocks),
            )
        };
        let mut hop: BTreeMap<(u64, u64), Inflow> = held
            .into_iter()
            .map(|inflow| (inflow.position(), inflow))
            .collect();
        if !missing.accounts.is_empty() {
            let read = read_inflows(rpc, tokens, chunk, &lookback.max_span, &missing).await?;
            lookback.cache().hold(&missing, &read);
            hop.extend(read.into_iter().map(|inflow| (inflow.position(), inflow)));
        }
        let hop: Vec<Inflow> = hop.into_values().collect();
        moves = next_moves(&moved_on(&moves, &hop, lookback.blocks), &hop);
        found.extend(hop.into_iter().map(|inflow| (inflow.position(), inflow)));
    }
    Ok(found.into_values().collect())
}

/// Every inflow of `missing.accounts` in `missing.from..=missing.to`: a request per chunk of
/// accounts and per `max_span` blocks, all at once (the RPC layer bounds how many are in
/// flight), each split further when the provider refuses it.
async fn read_inflows(
    rpc: &ChainRpc,
    tokens: &[Address],
    chunk: usize,
    max_span: &AtomicU64,
    missing: &Missing,
) -> Result<Vec<Inflow>, RpcError> {
    let width = max_span.load(Ordering::Relaxed).max(1);
    let spans: Vec<(u64, u64)> = (missing.from..=missing.to)
        .step_by(width as usize)
        .map(|start| (start, missing.to.min(start + width - 1)))
        .collect();
    let requests = missing
        .accounts
        .chunks(chunk.max(1))
        .flat_map(|group| spans.iter().map(move |span| (group, *span)))
        .map(|(group, (from, to))| {
            let words: Vec<B256> = group.iter().map(|a| a.into_word()).collect();
            let filter = Filter::new()
                .address(tokens.to_vec())
                .event_signature(Token::Transfer::SIGNATURE_HASH)
                .topic2(words);
            async move { logs_in_parts(rpc, filter, from, to, max_span).await }
        });
    Ok(try_join_all(requests)
        .await?
        .iter()
        .flatten()
        .filter_map(inflow_of)
        .collect())
}

type LogsFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<Log>, RpcError>> + Send + 'a>>;

/// The logs `filter` matches in `[from, to]`, in as many requests as the provider's caps need:
/// a range refused as too wide is cut to the width the provider names (or the range it
/// suggests, else in halves), one refused for holding too many logs in halves. A single block
/// holding more inflows than the provider returns is skipped with a warning: accounts that
/// busy have no one source of money.
fn logs_in_parts<'a>(
    rpc: &'a ChainRpc,
    filter: Filter,
    from: u64,
    to: u64,
    max_span: &'a AtomicU64,
) -> LogsFuture<'a> {
    Box::pin(async move {
        let ranged = filter.clone().from_block(from).to_block(to);
        let error = match rpc.logs(&ranged).await {
            Ok(logs) => return Ok(logs),
            Err(error) => error,
        };
        let width = match &error.kind {
            RpcErrorKind::RangeTooLarge {
                max_range,
                suggested,
                ..
            } if from < to => {
                let width = max_range
                    .or(suggested.map(|(start, end)| end.saturating_sub(start) + 1))
                    .filter(|w| *w >= 1 && *w <= to - from)
                    .unwrap_or((to - from).div_ceil(2));
                max_span.fetch_min(width, Ordering::Relaxed);
                width
            }
            RpcErrorKind::TooManyResults { .. } if from < to => (to - from).div_ceil(2),
            RpcErrorKind::TooManyResults { .. } => {
                tracing::warn!(
                    target: "agentindex::follower",
                    block = from,
                    "funding lookback skipped a block: it holds more inflows than the provider returns"
                );
                return Ok(Vec::new());
            }
            _ => return Err(error),
        };
        let parts = (from..=to).step_by(width as usize).map(|start| {
            logs_in_parts(
                rpc,
                filter.clone(),
                start,
                to.min(start + width - 1),
                max_span,
            )
        });
        Ok(try_join_all(parts).await?.into_iter().flatten().collect())
    })
}
