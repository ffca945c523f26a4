//! The reputation feed's lines: every agent of a chain with its reputation, one RFC 8785
//! canonical JSON object per line, in agent-key order, either as stored (the latest) or as of
//! a block. Two stores holding the same facts give the same bytes. `serve` writes the latest
//! feed with [`write_lines`]; the [`keeper`] computes and stores the feeds of epoch boundaries
//! with it, so `serve` reads those back instead of computing them.

pub mod keeper;
pub mod spool;

use crate::canonical_json;
use crate::reputation::ReputationRules;
use crate::store::{AgentReputation, Store, StoreError, StoreRead, StoredReputation};
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
    // Encodes nothing more once a line failed.
    let mut take = |encode: &dyn Fn() -> Result<Vec<u8>, FeedLinesError>| {
        if failed.is_some() {
            return;
        }
        let outcome = encode().and_then(|bytes| line(&bytes).map_err(FeedLinesError::Write));
        written += 1;
        if written.is_multiple_of(u64::from(YIELD_EVERY_LINES)) {
            // On a lowered thread (every feed is made on one), this is where a waiting request
            // gets the core back.
            crate::priority::offer_core();
        }
        failed = outcome.err();
    };
    match snapshot {
        Snapshot::Latest => {
            store
                .stored_reputations(chain_id, |page| {
                    for stored in page {
                        take(&|| stored_line(&stored));
                    }
                })
                .await?
        }
        Snapshot::AsOf { block, rules } => {
            store
                .reputation_as_of(chain_id, block, rules, |page| {
                    for agent in page {
                        take(&|| computed_line(&agent));
                    }
                })
                .await?
        }
    }
    failed.map_or(Ok(written), Err)
}

/// The canonical line of a reputation computed now.
fn computed_line(agent: &AgentReputation) -> Result<Vec<u8>, FeedLinesError> {
    canonical_json::to_vec(agent).map_err(|e| FeedLinesError::Encode {
        agent: agent.agent.clone(),
        reason: e.to_string(),
    })
}

/// The canonical line of a stored reputation, put together around its stored evaluation (which
/// the store keeps in canonical form, see `StoredReputation::canonical`) rather than decoded and
/// encoded again: RFC 8785 orders the
/// members by name, and `agent`, `as_of_block`, `as_of_timestamp`, `chain_id`, `evaluation`,
/// `score` is that order. Equal to [`computed_line`] of the same reputation (tested).
fn stored_line(stored: &StoredReputation) -> Result<Vec<u8>, FeedLinesError> {
    let encode = |e: serde_json::Error| FeedLinesError::Encode {
        agent: stored.agent.clone(),
        reason: e.to_string(),
    };
    if !stored.canonical {
        // Written in an older form (until the indexer's next start rescores the chain):
        // decoded and encoded whole.
        let whole = AgentReputation {
            agent: stored.agent.clone(),
            chain_id: stored.chain_id,
            as_of_block: stored.as_of_block,
            as_of_timestamp: stored.as_of_timestamp,
            score: stored.score,
            evaluation: serde_json::from_str(&stored.evaluation).map_err(encode)?,
        };
        return computed_line(&whole);
    }
    let canonical = |e: canonical_json::CanonicalJsonError| FeedLinesError::Encode {
        agent: stored.agent.clone(),
        reason: e.to_string(),
    };
    let agent = canonical_json::to_string(&stored.agent).map_err(canonical)?;
    let score = canonical_json::to_string(&stored.score).map_err(canonical)?;
    Ok(format!(
        "{{\"agent\":{agent},\"as_of_block\":{},\"as_of_timestamp\":{},\"chain_id\":{},\
         \"evaluation\":{},\"score\":{score}}}",
        stored.as_of_block, stored.as_of_timestamp, stored.chain_id, stored.evaluation
    )
    .into_bytes())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An evaluation as the store holds one (taken from a devnet agent's).
    const EVALUATION: &str = r#"{"composite":{"components":{"feedback":null,"payments":20.06608327835596,"ratings":null,"trust":39.346934028736655,"validations":null},"effective_weights":{"feedback":0,"payments":0.5,"ratings":0,"trust":0.5,"validations":0},"score":29.706508653546308},"excluded":{},"feedback":{"by_tag":{},"overall":{"average":null,"count":0},"responses":0,"revoked":0,"unique_clients":0},"feedback_evidence":{"clients":{},"evidence_weight":0,"feedback":[],"score":null,"top":[],"unpaid_scale":1},"payment_score":{"payers":[{"contribution":0.6931471805599453,"decayed":1,"payer":"0x976ea74026e726554db657fa54763abd0c3a0aa9","payments":1,"standing":0,"weight":1}],"score":20.06608327835596,"sum":1.791759469228055,"unproven":0.6931471805599453},"payments":{"first_payment":1795706234,"last_payment":1795706234,"payment_count":3,"recency_weighted":3,"repeat_payers":0,"top_payer_share":0.6666666666666666,"unique_payers":2,"volume":{"0x5fbdb2315678afecb367f032d93f642f64180aa3":3.5},"x402_count":0},"ratings":{"average":null,"raters":0,"ratings":0},"trust":{"epoch_block":40,"relative":1,"score":39.346934028736655,"top_payers":[]},"validations":{"answered":0,"average":null,"pass_rate":null,"requests":0,"responses":0}}"#;

    /// The latest feed's lines, put together around the stored evaluation, are byte for byte
    /// what encoding the whole reputation gives, whatever the score's number form and however
    /// the key needs escaping.
    #[test]
    fn a_stored_line_is_the_line_of_the_same_reputation_encoded_whole() {
        let evaluation: crate::reputation::Evaluation = serde_json::from_str(EVALUATION).unwrap();
        for (agent, score) in [
            (
                "31337:0xb0279db6a2f1e01fbc8483fccef0be2bc6299cc3",
                29.706508653546308,
            ),
            ("8453:erc8004:0x80:7", 0.0),
            ("key \"quoted\" \u{e9}\u{1f600}\\", 1e21),
            ("small", 5e-7),
            ("hundred", 100.0),
        ] {
            let computed = AgentReputation {
                agent: agent.into(),
                chain_id: 31337,
                as_of_block: 28,
                as_of_timestamp: 1_795_706_234,
                score,
                evaluation: evaluation.clone(),
            };
            let stored = StoredReputation {
                agent: agent.into(),
                chain_id: 31337,
                as_of_block: 28,
                as_of_timestamp: 1_795_706_234,
                score,
                evaluation: canonical_json::to_string(&evaluation).unwrap(),
                canonical: true,
            };
            // The same row written in the older form (serde_json's) comes out the same.
            let older = StoredReputation {
                evaluation: serde_json::to_string(&evaluation).unwrap(),
                canonical: false,
                ..stored.clone()
            };
            assert_ne!(older.evaluation, stored.evaluation, "the forms differ");
            assert_eq!(
                stored_line(&older).unwrap(),
                computed_line(&computed).unwrap()
            );
            let (whole, put_together) = (
                computed_line(&computed).unwrap(),
                stored_line(&stored).unwrap(),
            );
            assert_eq!(
                String::from_utf8(put_together).unwrap(),
                String::from_utf8(whole).unwrap(),
                "{agent} at {score}"
            );
        }
        let nan = StoredReputation {
            score: f64::NAN,
            agent: "nan".into(),
            chain_id: 1,
            as_of_block: 1,
            as_of_timestamp: 1,
            evaluation: "{}".into(),
            canonical: true,
        };
        assert!(
            matches!(stored_line(&nan), Err(FeedLinesError::Encode { agent, .. }) if agent == "nan"),
            "a score with no canonical form is an error naming the agent"
        );
    }
}
