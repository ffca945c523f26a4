//! The reputation feed's lines: every agent of a chain with its reputation, one RFC 8785
//! canonical JSON object per line, in agent-key order, either as stored (the latest) or as of
//! a block. Two stores holding the same facts give the same bytes. `serve` writes the latest
//! feed with [`write_lines`]; the [`keeper`] computes and stores the feeds of epoch boundaries
//! with it, so `serve` reads those back instead of computing them.

pub mod keeper;
pub mod spool;

use crate::reputation::ReputationRules;
use crate::store::{AgentReputation, Store, StoreError, StoreRead};
use std::io;

/// Lines written between two offers of the core to any other thread waiting (a few hundred
/// microseconds of encoding; see [`crate::priority::offer_core`]).
const YIELD_EVERY_LINES: u32 = 32;

/// Why a feed's lines could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FeedLinesError {
    /// An agent's reputation has no canonical JSON form (a non-finite number).
    #[error("agent {agent}: its reputation cannot be written canonically: {reason}")]
    Encode {
        /// The agent.
        agent: String,
        /// The encoder's reason.
        reason: String,
    },
    /// The line could not be taken (the file it was written to failed).
    #[error("writing the feed: {0}")]
    Write(#[from] io::Error),
    /// The store failed.
    #[error("reading the store: {0}")]
    Store(#[from] StoreError),
}

/// Which reputation a feed lists.
#[derive(Debug, Clone, Copy)]
pub enum Snapshot<'a> {
    /// Each agent's stored reputation, as of the newest block among its own facts (what the
    /// API's `reputation` field shows): read, not computed.
    Latest,
    /// Every agent registered by `block`, scored as of `block` under `rules`: computed.
    AsOf {
        /// The block.
        block: u64,
        /// The chain's rules.
        rules: &'a ReputationRules,
    },
}

/// Hands each line of `chain_id`'s feed of `snapshot` to `line` (without its newline), in key
/// order, a page of agents at a time, all read from one snapshot; stops at the first line that
/// cannot be encoded or taken. Returns the lines written.
pub async fn write_lines(
    store: &Store,
    chain_id: u64,
    snapshot: Snapshot<'_>,
    mut line: impl FnMut(&[u8]) -> io::Result<()> + Send,
) -> Result<u64, FeedLinesError> {
    let mut failed = None;
    let mut written: u64 = 0;
    let page = |page: Vec<AgentReputation>| {
        for agent in page {
            if failed.is_some() {
                return;
            }
            let outcome = match serde_jcs::to_vec(&agent) {
                Ok(encoded) => line(&encoded).map_err(FeedLinesError::Write),
                Err(e) => Err(FeedLinesError::Encode {
                    agent: agent.agent.clone(),
                    reason: e.to_string(),
                }),
            };
            written += 1;
            if written.is_multiple_of(u64::from(YIELD_EVERY_LINES)) {
                // On a lowered thread (every feed computation runs on one), this is where a
                // waiting request gets the core back.
                crate::priority::offer_core();
            }
            failed = outcome.err();
        }
    };
    match snapshot {
        Snapshot::Latest => store.stored_reputations(chain_id, page).await?,
        Snapshot::AsOf { block, rules } => {
            store.reputation_as_of(chain_id, block, rules, page).await?
        }
    }
    failed.map_or(Ok(written), Err)
}

/// `chain_id`'s feed of `snapshot`, in memory (tests and checks; served and stored feeds go
/// through files instead).
pub async fn body(
    store: &Store,
    chain_id: u64,
    snapshot: Snapshot<'_>,
) -> Result<Vec<u8>, FeedLinesError> {
    let mut body = Vec::new();
    write_lines(store, chain_id, snapshot, |line| {
        body.extend_from_slice(line);
        body.push(b'\n');
        Ok(())
    })
    .await?;
    Ok(body)
}
