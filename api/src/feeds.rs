//! `GET /feeds/reputation.jsonl[?block=N][&chain=ID]`: every agent of a chain with its scores
//! and their components, one JSON object per line, in agent-key order, each line in RFC 8785
//! canonical form ([`agentindex_indexer::feed`]). Two instances that indexed the same chain
//! serve byte-identical feeds, so the SHA-256 of the body (in `Repr-Digest` and
//! `X-Feed-Sha256`) is enough to compare them.
//!
//! Every feed is served from stored results, never scored on request: the latest (no `block`,
//! or the indexed block when no feed is stored for it) lists each agent's stored reputation, as of the newest block among
//! its own facts; a final epoch boundary's, stored by the indexer
//! ([`agentindex_indexer::feed::keeper`]), lists every agent scored as of that block. Any other
//! block is refused with 404 naming those that have one: scoring every agent again at a block
//! of a stranger's choosing is work no public server should do on request.
//!
//! Either way the feed goes through [`crate::feed_cache`]: written to a temporary file (never
//! held in memory whole), kept while valid, one computation or read at a time per lane, one
//! started per client per period, each with a timeout, off the request threads.

use crate::client::ClientKey;
use crate::client_error;
use crate::feed_cache::{FeedCacheError, FeedKey, Lane};
use crate::feed_spool::FeedWriter;
use crate::state::ApiState;
use agentindex_indexer::feed::{FeedLinesError, Snapshot, write_lines};
use agentindex_indexer::store::{StoreRead, StoredFeed};
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::collections::BTreeMap;
use std::io;

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
    /// The block is neither the indexed block nor a stored epoch boundary.
    #[error(
        "block {block} of chain {chain_id} has no feed: feeds are served for the indexed block \
         ({indexed}) and for the epoch boundaries stored ({})",
        list(stored)
    )]
    NotStored {
        /// The chain.
        chain_id: u64,
        /// The block asked for.
        block: u64,
        /// The newest indexed block.
        indexed: u64,
        /// The blocks with a stored feed, newest first.
        stored: Vec<u64>,
    },
    /// A stored feed was dropped or replaced while it was read.
    #[error("the stored feed of block {block} changed while it was read; ask again")]
    StoredChanged {
        /// The block.
        block: u64,
    },
    /// The indexed block's feed could not be computed.
    #[error(transparent)]
    Lines(#[from] FeedLinesError),
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
            | FeedError::Lines(_)
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
            FeedError::StoredChanged { .. } => StatusCode::SERVICE_UNAVAILABLE,
            FeedError::UnknownChain(_) | FeedError::NotStored { .. } => StatusCode::NOT_FOUND,
            _ => StatusCode::BAD_REQUEST,
        };
        let retry_after = match &self {
            FeedError::Cache(error) => error.retry_after_secs(),
            _ => None,
        };
        let mut body = serde_json::json!({ "error": self.to_string() });
        if let FeedError::NotStored {
            indexed, stored, ..
        } = &self
        {
            body["indexed_block"] = (*indexed).into();
            body["stored_blocks"] = stored.clone().into();
        }
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
    request: HeaderMap,
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
    if !state.rules.contains_key(&chain_id) {
        return Err(FeedError::UnknownChain(chain_id));
    }
    let indexed = state
        .store
        .progress(chain_id)
        .await?
        .map_or(0, |p| p.next_block.saturating_sub(1));
    let asked = block;
    let block = asked.unwrap_or(indexed);
    if block > indexed {
        return Err(FeedError::NotIndexed {
            chain_id,
            block,
            indexed,
        });
    }
    let store = state.store.clone();
    let stored = match asked {
        Some(block) => state.store.stored_feed(chain_id, block).await?,
        None => None,
    };
    let feed_headers = FeedHeaders { chain_id, block };
    let key = FeedKey {
        chain_id,
        block,
        stored: stored.is_some(),
    };
    let feed = if let Some(stored) = stored {
        // A stored feed never changes: it is kept for as long as its digest is the stored one.
        if feed_headers.already_has(&request, &stored.sha256) {
            return Ok(feed_headers.not_modified(&stored.sha256));
        }
        let version = version_of(&stored);
        let copy = move |writer| copy_stored(store, chain_id, stored, writer);
        state
            .feeds
            .get(client, key, version, Lane::Stored, copy)
            .await?
    } else if block == indexed {
        // The latest: every agent's stored reputation, read and written out, not scored.
        let version = state.cache.version().await?;
        let write = move |mut writer: FeedWriter| async move {
            write_lines(&store, chain_id, Snapshot::Latest, |line| {
                writer.write_line(line)
            })
            .await?;
            Ok::<_, FeedError>(writer)
        };
        state
            .feeds
            .get(client, key, version, Lane::Newest, write)
            .await?
    } else {
        let stored = state.store.stored_feeds(chain_id).await?;
        return Err(FeedError::NotStored {
            chain_id,
            block,
            indexed,
            stored: stored.iter().map(|feed| feed.block).collect(),
        });
    };
    // Charged only for a body it is sent: a feed it has already costs it nothing, and neither
    // does a busy lane's refusal. (A client past its share was refused before anything was
    // made for it; making a feed is bounded by the lanes, one at a time each, and there is one
    // latest feed per database version and a few stored ones.)
    let digest = hex(&feed.digest);
    if feed_headers.already_has(&request, &digest) {
        return Ok(feed_headers.not_modified(&digest));
    }
    state.feeds.charge(client)?;
    let mut headers = feed_headers.of(&digest);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl; charset=utf-8"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(feed.len));
    let b64 = base64::engine::general_purpose::STANDARD.encode(feed.digest);
    headers.insert(
        "repr-digest",
        HeaderValue::from_str(&format!("sha-256=:{b64}:")).expect("base64 is valid header text"),
    );
    // Streamed from its file: the file stays readable for this response even if the cache
    // drops the feed meanwhile.
    let chunks = feed.chunks(STREAM_CHUNK_BYTES);
    Ok((headers, Body::from_stream(chunks)).into_response())
}

/// The headers every answer with a feed, or about one, carries.
struct FeedHeaders {
    chain_id: u64,
    block: u64,
}

impl FeedHeaders {
    /// `X-Feed-Sha256`, `ETag` (the digest, quoted), `X-Feed-Chain` and `X-Feed-Block`.
    fn of(&self, sha256_hex: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            (header::ETAG.as_str(), format!("\"{sha256_hex}\"")),
            ("x-feed-sha256", sha256_hex.to_string()),
            ("x-feed-chain", self.chain_id.to_string()),
            ("x-feed-block", self.block.to_string()),
        ] {
            headers.insert(
                name,
                HeaderValue::from_str(&value).expect("digits and hex are valid header text"),
            );
        }
        headers
    }

    /// Whether `request` says (`If-None-Match`) that its client has the feed of `sha256_hex`.
    fn already_has(&self, request: &HeaderMap, sha256_hex: &str) -> bool {
        let etag = format!("\"{sha256_hex}\"");
        request
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(|tag| tag.trim().trim_start_matches("W/"))
            .any(|tag| tag == etag || tag == "*")
    }

    /// 304 Not Modified for the feed of `sha256_hex`: no body, and nothing of the client's
    /// share taken.
    fn not_modified(&self, sha256_hex: &str) -> Response {
        (StatusCode::NOT_MODIFIED, self.of(sha256_hex)).into_response()
    }
}

/// A digest in lowercase hex.
fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies the stored feed `stored` of `chain_id` into `writer`, page by page, and checks that
/// what was read is what was stored (a feed dropped meanwhile comes up short).
async fn copy_stored(
    store: agentindex_indexer::store::Store,
    chain_id: u64,
    stored: StoredFeed,
    mut writer: FeedWriter,
) -> Result<FeedWriter, FeedError> {
    let mut page = 0;
    while let Some(lines) = store.stored_feed_page(chain_id, stored.block, page).await? {
        writer.write_lines(lines.as_bytes())?;
        page += 1;
        // The copy runs on a lowered thread; this is its preemption point.
        agentindex_indexer::priority::offer_core();
    }
    if writer.len() != stored.bytes || writer.sha256_hex() != stored.sha256 {
        return Err(FeedError::StoredChanged {
            block: stored.block,
        });
    }
    Ok(writer)
}

/// The feed cache's version for a stored feed: from its digest, so it stays valid for as long
/// as the stored feed is the same.
fn version_of(stored: &StoredFeed) -> i64 {
    i64::from_str_radix(stored.sha256.get(..15).unwrap_or("0"), 16).unwrap_or(0)
}

/// Blocks as a list for a message, or "none".
fn list(blocks: &[u64]) -> String {
    if blocks.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = blocks.iter().map(u64::to_string).collect();
    shown.join(", ")
}
