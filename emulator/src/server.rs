//! The HTTP side: one JSON-RPC route that delays, limits, refuses or forwards each call, and
//! `GET /stats` with the counters.

use crate::{Counters, Limits, Refusal};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::num::NonZeroU32;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

struct Shared {
    upstream: String,
    client: reqwest::Client,
    limits: Limits,
    limiter: Option<DefaultDirectRateLimiter>,
    dice: Mutex<StdRng>,
    counters: Arc<Counters>,
}

pub(crate) fn router(upstream: &str, limits: Limits, counters: Arc<Counters>) -> Router {
    let limiter = limits
        .requests_per_second
        .and_then(NonZeroU32::new)
        .map(|rate| {
            let burst = limits.burst.and_then(NonZeroU32::new).unwrap_or(rate);
            RateLimiter::direct(Quota::per_second(rate).allow_burst(burst))
        });
    let shared = Arc::new(Shared {
        upstream: upstream.to_string(),
        client: reqwest::Client::new(),
        dice: Mutex::new(StdRng::seed_from_u64(limits.seed)),
        limits,
        limiter,
        counters,
    });
    Router::new()
        .route("/", post(rpc))
        .route("/{*path}", post(rpc))
        .route("/stats", get(stats))
        .with_state(shared)
}

async fn stats(State(shared): State<Arc<Shared>>) -> Response {
    json_response(StatusCode::OK, shared.counters.to_json())
}

async fn rpc(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    shared
        .counters
        .http_requests
        .fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(shared.limits.latency).await;
    let Ok(parsed) = serde_json::from_slice::<Value>(&body) else {
        return json_response(
            StatusCode::OK,
            error_object(&Value::Null, -32700, "parse error"),
        );
    };
    if let Some(key) = &shared.limits.api_key
        && uri.path().rsplit('/').next() != Some(key.as_str())
    {
        let id = match &parsed {
            Value::Array(calls) => calls.first().map_or(Value::Null, |c| c["id"].clone()),
            call => call["id"].clone(),
        };
        return refusal_response(&id, &shared.limits.provider.key_rejected());
    }
    let (calls, batch) = match parsed {
        Value::Array(calls) => (calls, true),
        call => (vec![call], false),
    };
    let first_id = calls.first().map_or(Value::Null, |c| c["id"].clone());
    if let Some(limiter) = &shared.limiter {
        let cost = NonZeroU32::new(calls.len() as u32).unwrap_or(NonZeroU32::MIN);
        if !matches!(limiter.check_n(cost), Ok(Ok(()))) {
            shared.counters.rate_limited.fetch_add(1, Ordering::Relaxed);
            let rate = shared.limits.requests_per_second.unwrap_or(1);
            let refusal = shared.limits.provider.rate_limited(rate);
            return refusal_response(&first_id, &refusal);
        }
    }
    if let Some(fault) = roll_fault(&shared) {
        shared.counters.faults.fetch_add(1, Ordering::Relaxed);
        match fault {
            Fault::Unavailable => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "<html><body>503 Service Temporarily Unavailable</body></html>",
                )
                    .into_response();
            }
            Fault::Internal => {
                return json_response(
                    StatusCode::OK,
                    error_object(&first_id, -32603, "internal error"),
                );
            }
            Fault::Stall => tokio::time::sleep(shared.limits.stall).await,
        }
    }
    let mut answers = Vec::with_capacity(calls.len());
    for call in &calls {
        answers.push(answer(&shared, call).await);
    }
    match batch {
        true => json_response(StatusCode::OK, Value::Array(answers)),
        false => json_response(StatusCode::OK, answers.pop().unwrap_or(Value::Null)),
    }
}

enum Fault {
    Unavailable,
    Internal,
    Stall,
}

fn roll_fault(shared: &Shared) -> Option<Fault> {
    if shared.limits.fault_rate <= 0.0 {
        return None;
    }
    let mut dice = shared.dice.lock().unwrap_or_else(|e| e.into_inner());
    if !dice.random_bool(shared.limits.fault_rate.min(1.0)) {
        return None;
    }
    Some(match dice.random_range(0..3) {
        0 => Fault::Unavailable,
        1 => Fault::Internal,
        _ => Fault::Stall,
    })
}

/// One call: refused for its range, forwarded, then refused for its results, or answered.
async fn answer(shared: &Shared, call: &Value) -> Value {
    let id = &call["id"];
    let method = call["method"].as_str().unwrap_or_default();
    let range = (method == "eth_getLogs")
        .then(|| block_range(&call["params"][0]))
        .flatten();
    if let (Some((from, to)), Some(cap)) = (range, shared.limits.max_block_range)
        && to - from + 1 > cap
    {
        shared
            .counters
            .range_refusals
            .fetch_add(1, Ordering::Relaxed);
        let refusal = shared.limits.provider.range_refusal(from, to, cap);
        return error_object(id, refusal.code, &refusal.message);
    }
    let answer = match forward(shared, call).await {
        Ok(answer) => answer,
        Err(error) => return error_object(id, -32603, &error.to_string()),
    };
    if let (Some((from, _)), Some(cap), Some(logs)) = (
        range,
        shared.limits.max_results,
        answer["result"].as_array(),
    ) && logs.len() > cap
    {
        shared
            .counters
            .result_refusals
            .fetch_add(1, Ordering::Relaxed);
        let refusal = shared
            .limits
            .provider
            .result_refusal(cap, fitting_range(from, logs, cap));
        return error_object(id, refusal.code, &refusal.message);
    }
    shared.counters.served(method);
    answer
}

/// Why a call could not be passed on: answered to the client as a JSON-RPC internal error.
#[derive(Debug, thiserror::Error)]
enum ForwardError {
    /// The upstream node could not be reached.
    #[error("upstream: {0}")]
    Send(#[source] reqwest::Error),
    /// The upstream node's answer is not JSON.
    #[error("upstream answer: {0}")]
    Answer(#[source] reqwest::Error),
}

async fn forward(shared: &Shared, call: &Value) -> Result<Value, ForwardError> {
    let answer = shared
        .client
        .post(&shared.upstream)
        .json(call)
        .send()
        .await
        .map_err(ForwardError::Send)?;
    answer.json::<Value>().await.map_err(ForwardError::Answer)
}

/// The numeric `[fromBlock, toBlock]` of a log filter; `None` for block tags and hashes, which
/// are served without a range check.
fn block_range(filter: &Value) -> Option<(u64, u64)> {
    let number = |v: &Value| {
        v.as_str()
            .and_then(|s| s.strip_prefix("0x"))
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
    };
    let (from, to) = (number(&filter["fromBlock"])?, number(&filter["toBlock"])?);
    (from <= to).then_some((from, to))
}

/// The widest range from `from` whose logs number at most `cap` (at least the first block).
fn fitting_range(from: u64, logs: &[Value], cap: usize) -> (u64, u64) {
    let mut blocks: Vec<u64> = logs
        .iter()
        .filter_map(|log| log["blockNumber"].as_str())
        .filter_map(|hex| u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok())
        .collect();
    blocks.sort_unstable();
    let mut last = from;
    let mut index = 0;
    while index < blocks.len() {
        let block = blocks[index];
        let end = blocks.partition_point(|b| *b <= block);
        if end > cap {
            // The logs up to this block are too many: stop before it.
            return (from, block.saturating_sub(1).max(from));
        }
        last = block;
        index = end;
    }
    (from, last)
}

fn error_object(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn refusal_response(id: &Value, refusal: &Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::OK);
    json_response(status, error_object(id, refusal.code, &refusal.message))
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs_at(blocks: &[u64]) -> Vec<Value> {
        blocks
            .iter()
            .map(|b| json!({"blockNumber": format!("{b:#x}")}))
            .collect()
    }

    #[test]
    fn the_suggested_range_holds_whole_blocks_within_the_cap() {
        let logs = logs_at(&[10, 10, 11, 12, 12, 12, 15]);
        assert_eq!(fitting_range(10, &logs, 3), (10, 11));
        assert_eq!(
            fitting_range(10, &logs, 6),
            (10, 14),
            "no logs in 13 and 14"
        );
        assert_eq!(
            fitting_range(10, &logs, 1),
            (10, 10),
            "a block over the cap alone"
        );
        assert_eq!(fitting_range(8, &logs, 1), (8, 9));
    }
}
