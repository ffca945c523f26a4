//! `GET /feeds/reputation.jsonl?block=N[&chain=ID]`: every agent of a chain registered by block
//! `N`, with its scores and their components as of `N`, one JSON object per line, in agent-key
//! order, each line in RFC 8785 canonical form. Two instances that indexed the same chain serve
//! byte-identical feeds, so the SHA-256 of the body (in `Repr-Digest` and `X-Feed-Sha256`) is
//! enough to compare them.
//!
//! Feeds are computed through [`crate::feed_cache`]: written to a temporary file as they are
//! computed (never held in memory whole) and kept while the database is unchanged, one
//! computation at a time for the indexed block and one for earlier blocks, one started per
//! client per period, each with a timeout, off the request threads. Any indexed block is
//! served: those bounds are what a client asking for block after block can cost.

use crate::client::ClientKey;
use crate::client_error;
use crate::feed_cache::{FeedCacheError, FeedKey, Lane};
use crate::state::ApiState;
use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::Store;
use agentindex_indexer::store::StoreRead;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::collections::BTreeMap;
use std::io;

/// Lines a feed computation writes between two offers of its core to any other thread waiting
/// (a few hundred microseconds of encoding).
const YIELD_EVERY_LINES: u32 = 32;

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
    /// The feed could not be written to, or read back from, its temporary file.
    #[error("the feed's temporary file: {0}")]
    Spool(#[from] io::Error),
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
            FeedError::Store(_)
            | FeedError::Encode { .. }
            | FeedError::Version(_)
            | FeedError::Spool(_) => {
                let hidden = client_error::hide("reading the reputation feed", &self);
                return hidden.response(StatusCode::INTERNAL_SERVER_ERROR);
            }
            FeedError::Cache(FeedCacheError::Failed(hidden)) => {
                return hidden.response(StatusCode::INTERNAL_SERVER_ERROR);
            }
            FeedError::Cache(FeedCacheError::Busy { .. } | FeedCacheError::TimedOut { .. }) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            FeedError::Cache(FeedCacheError::ClientShare { .. }) => StatusCode::TOO_MANY_REQUESTS,
            FeedError::UnknownChain(_) => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        };
        let retry_after = match &self {
            FeedError::Cache(error) => error.retry_after_secs(),
            _ => None,
        };
        let body = serde_json::json!({ "error": self.to_string() });
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Bytes read from a feed's file at a time while it is sent.
const STREAM_CHUNK_BYTES: usize = 256 * 1024;

/// The feed handler.
pub async fn reputation(
    State(state): State<ApiState>,
    client: ClientKey,
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
    let lane = if block == indexed {
        Lane::Newest
    } else {
        Lane::Past
    };
    let version = state.cache.version().await?;
    let (store, rules) = (state.store.clone(), rules.clone());
    let compute = move |mut writer: crate::feed_spool::FeedWriter| async move {
        let mut lines: u32 = 0;
        write(&store, chain_id, block, &rules, |line| {
            // The computation's thread is lowered; this is its preemption point.
            lines = lines.wrapping_add(1);
            if lines.is_multiple_of(YIELD_EVERY_LINES) {
                agentindex_indexer::priority::offer_core();
            }
            writer.write_line(line)
        })
        .await?;
        Ok::<_, FeedError>(writer)
    };
    let key = FeedKey { chain_id, block };
    let feed = state.feeds.get(key, version, lane, client, compute).await?;
    let digest = feed.digest;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl; charset=utf-8"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(feed.len));
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
    // Streamed from its file: the file stays readable for this response even if the cache
    // drops the feed meanwhile.
    let chunks = feed.chunks(STREAM_CHUNK_BYTES);
    Ok((headers, Body::from_stream(chunks)).into_response())
}

/// The feed of `chain_id` at `block` under `rules`, in memory: one canonical JSON line per
/// agent, in key order. Two stores holding the same facts give the same bytes. (Served feeds
/// are written to a file instead; see [`crate::feed_spool`].)
pub async fn body(
    store: &Store,
    chain_id: u64,
    block: u64,
    rules: &ReputationRules,
) -> Result<Vec<u8>, FeedError> {
    let mut body = Vec::new();
    write(store, chain_id, block, rules, |line| {
        body.extend_from_slice(line);
        body.push(b'\n');
        Ok(())
    })
    .await?;
    Ok(body)
}

/// Hands each line of the feed of `chain_id` at `block` to `line` (without its newline), in
/// key order, a page of agents at a time; stops at the first line that cannot be encoded or
/// taken.
async fn write(
    store: &Store,
    chain_id: u64,
    block: u64,
    rules: &ReputationRules,
    mut line: impl FnMut(&[u8]) -> io::Result<()> + Send,
) -> Result<(), FeedError> {
    let mut failed = None;
    store
        .reputation_as_of(chain_id, block, rules, |page| {
            for agent in page {
                if failed.is_some() {
                    return;
                }
                let written = match serde_jcs::to_vec(&agent) {
                    Ok(encoded) => line(&encoded).map_err(FeedError::Spool),
                    Err(e) => Err(FeedError::Encode {
                        agent: agent.agent.clone(),
                        reason: e.to_string(),
                    }),
                };
                failed = written.err();
            }
        })
        .await?;
    failed.map_or(Ok(()), Err)
}
