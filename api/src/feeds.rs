//! `GET /feeds/reputation.jsonl?block=N[&chain=ID]`: every agent of a chain registered by block
//! `N`, with its scores and their components as of `N`, one JSON object per line, in agent-key
//! order, each line in RFC 8785 canonical form. Two instances that indexed the same chain serve
//! byte-identical feeds, so the SHA-256 of the body (in `Repr-Digest` and `X-Feed-Sha256`) is
//! enough to compare them.
//!
//! Feeds are computed through [`crate::feed_cache`]: kept while the database is unchanged, one
//! computation at a time, with a timeout. Any indexed block is served (not only stored epoch
//! boundaries): the single computation and its timeout bound what a client asking for block
//! after block can cost.

use crate::client_error;
use crate::feed_cache::{BUSY_RETRY_AFTER_SECS, FeedCacheError, FeedKey};
use crate::state::ApiState;
use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::StoreRead;
use agentindex_indexer::store::{AgentReputation, Store};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::collections::BTreeMap;

/// Why a feed request was refused.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    /// A query parameter is not a block or chain number.
    #[error("query parameter {name}={value:?} is not a non-negative integer")]
    BadParameter {
        /// The parameter.
        name: &'static str,
        /// What was given.
        value: String,
    },
    /// Several chains are configured and none was named.
    #[error("several chains are indexed ({0}); name one with ?chain=ID")]
    ChainNeeded(String),
    /// The chain is not configured.
    #[error("chain {0} is not indexed here")]
    UnknownChain(u64),
    /// The block is beyond what is indexed.
    #[error("block {block} of chain {chain_id} is not indexed yet (indexed up to {indexed})")]
    NotIndexed {
        /// The chain.
        chain_id: u64,
        /// The block asked for.
        block: u64,
        /// The newest indexed block.
        indexed: u64,
    },
    /// An agent's reputation has no canonical JSON form (a non-finite number).
    #[error("agent {agent}: its reputation cannot be written canonically: {reason}")]
    Encode {
        /// The agent.
        agent: String,
        /// The encoder's reason.
        reason: String,
    },
    /// The store failed.
    #[error("reading the store: {0}")]
    Store(#[from] agentindex_indexer::store::StoreError),
    /// The database's version could not be read.
    #[error("reading the database's version: {0}")]
    Version(#[from] sqlx::Error),
    /// The feed is being computed for another block, took too long, or failed.
    #[error(transparent)]
    Cache(#[from] FeedCacheError),
}

impl IntoResponse for FeedError {
    fn into_response(self) -> Response {
        let status = match &self {
            FeedError::Store(_) | FeedError::Encode { .. } | FeedError::Version(_) => {
                let hidden = client_error::hide("reading the reputation feed", &self);
                return hidden.response(StatusCode::INTERNAL_SERVER_ERROR);
            }
            FeedError::Cache(FeedCacheError::Failed(hidden)) => {
                return hidden.response(StatusCode::INTERNAL_SERVER_ERROR);
            }
            FeedError::Cache(FeedCacheError::Busy { .. } | FeedCacheError::TimedOut { .. }) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            FeedError::UnknownChain(_) => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        };
        let body = serde_json::json!({ "error": self.to_string() });
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(BUSY_RETRY_AFTER_SECS),
            );
        }
        response
    }
}

/// The feed handler.
pub async fn reputation(
    State(state): State<ApiState>,
    Query(params): Query<BTreeMap<String, String>>,
) -> Result<Response, FeedError> {
    let number = |name: &'static str| -> Result<Option<u64>, FeedError> {
        params
            .get(name)
            .map(|value| {
                value.parse::<u64>().map_err(|_| FeedError::BadParameter {
                    name,
                    value: value.clone(),
                })
            })
            .transpose()
    };
    let (chain, block) = (number("chain")?, number("block")?);
    let chain_id = match chain {
        Some(id) => id,
        None if state.rules.len() == 1 => *state.rules.keys().next().expect("one chain"),
        None => {
            let ids: Vec<String> = state.rules.keys().map(u64::to_string).collect();
            return Err(FeedError::ChainNeeded(ids.join(", ")));
        }
    };
    let rules = state
        .rules
        .get(&chain_id)
        .ok_or(FeedError::UnknownChain(chain_id))?;
    let indexed = state
        .store
        .progress(chain_id)
        .await?
        .map_or(0, |p| p.next_block.saturating_sub(1));
    let block = block.unwrap_or(indexed);
    if block > indexed {
        return Err(FeedError::NotIndexed {
            chain_id,
            block,
            indexed,
        });
    }
    let version = state.cache.version().await?;
    let (store, rules) = (state.store.clone(), rules.clone());
    let feed = state
        .feeds
        .get(FeedKey { chain_id, block }, version, async move {
            body(&store, chain_id, block, &rules).await
        })
        .await?;
    let digest = feed.digest;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl; charset=utf-8"),
    );
    let b64 = base64::engine::general_purpose::STANDARD.encode(digest);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    for (name, value) in [
        ("repr-digest", format!("sha-256=:{b64}:")),
        ("x-feed-sha256", hex),
        ("x-feed-chain", chain_id.to_string()),
        ("x-feed-block", block.to_string()),
    ] {
        headers.insert(
            name,
            HeaderValue::from_str(&value).expect("digits, hex and base64 are valid header text"),
        );
    }
    Ok((headers, feed.body.clone()).into_response())
}

/// The feed of `chain_id` at `block` under `rules`: one canonical JSON line per agent, in key
/// order. Two stores holding the same facts give the same bytes.
pub async fn body(
    store: &Store,
    chain_id: u64,
    block: u64,
    rules: &ReputationRules,
) -> Result<Vec<u8>, FeedError> {
    let mut body = Vec::new();
    let mut unencodable = None;
    store
        .reputation_as_of(chain_id, block, rules, |page| {
            for agent in page {
                if let Err(e) = write_line(&mut body, &agent) {
                    unencodable.get_or_insert(FeedError::Encode {
                        agent: agent.agent.clone(),
                        reason: e.to_string(),
                    });
                }
            }
        })
        .await?;
    match unencodable {
        Some(error) => Err(error),
        None => Ok(body),
    }
}

/// Appends `agent` as one canonical JSON line.
fn write_line(body: &mut Vec<u8>, agent: &AgentReputation) -> serde_json::Result<()> {
    let line = serde_jcs::to_vec(agent)?;
    body.extend_from_slice(&line);
    body.push(b'\n');
    Ok(())
}
