//! x402 probes: an unpaid GET of the resource, up when it answers 402 with payment
//! requirements (version 2's `PAYMENT-REQUIRED` header, base64 JSON, or version 1's JSON body
//! `{x402Version, accepts}`). Kept: each requirement's scheme, network, asset, amount and
//! `payTo`, and whether a `payTo` is one of the agent's wallets ("x402 verified live"). Nothing
//! is ever paid.

use super::prober::{answered, unanswered, unexpected_status};
use super::{Outcome, Prober, Reason, Status, Target};
use crate::documents::Request;
use base64::Engine;
use reqwest::header::ACCEPT;
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

/// Requirements kept at most.
const MAX_ACCEPTS: usize = 16;

/// Asks the resource at `url` without paying.
pub(super) async fn probe(
    prober: &Prober,
    target: &Target,
    url: Url,
    deadline: Instant,
) -> Outcome {
    let request = Request::get(url).header(ACCEPT, "application/json");
    let (answer, latency) = match prober.send(&request, deadline).await {
        Ok(sent) => sent,
        Err(error) => return unanswered(target, &error),
    };
    let outcome = answered(target, &answer, latency, Status::Up);
    match answer.status {
        402 => {}
        200..=299 => {
            return outcome.failed(
                Status::Degraded,
                Reason::Protocol,
                "answered without asking for payment",
            );
        }
        _ => return unexpected_status(target, &answer, latency),
    }
    let header = answer.header("payment-required");
    let Some(required) = requirements(header, &answer.body) else {
        return outcome.failed(
            Status::Degraded,
            Reason::Protocol,
            "402 without readable payment requirements",
        );
    };
    let mut outcome = outcome;
    outcome.protocol_version = required.version.map(|v| v.to_string());
    let matches = (!target.wallets.is_empty()).then(|| {
        required.accepts.iter().any(|accept| {
            accept
                .get("payTo")
                .and_then(Value::as_str)
                .is_some_and(|pay_to| {
                    target
                        .wallets
                        .iter()
                        .any(|w| w.eq_ignore_ascii_case(pay_to))
                })
        })
    });
    outcome.detail = json!({
        "x402Version": required.version,
        "accepts": required.accepts,
        "walletMatches": matches,
    });
    outcome
}

/// What a 402 asked for.
#[derive(Debug, Clone, PartialEq)]
struct Required {
    version: Option<i64>,
    /// Each `{scheme, network, asset, amount, payTo}`.
    accepts: Vec<Value>,
}

/// The requirements in a `PAYMENT-REQUIRED` header (version 2) or else in the body (version
/// 1), when they name at least one `payTo`.
fn requirements(header: Option<&str>, body: &[u8]) -> Option<Required> {
    let from_header = header.and_then(|h| {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(h.trim())
            .ok()?;
        serde_json::from_slice::<Value>(&bytes).ok()
    });
    let document = from_header.or_else(|| serde_json::from_slice::<Value>(body).ok())?;
    let accepts: Vec<Value> = document
        .get("accepts")?
        .as_array()?
        .iter()
        .filter(|accept| accept.get("payTo").and_then(Value::as_str).is_some())
        .take(MAX_ACCEPTS)
        .map(|accept| {
            let text = |names: &[&str]| {
                names
                    .iter()
                    .find_map(|name| accept.get(*name).and_then(Value::as_str))
                    .map(str::to_string)
            };
            json!({
                "scheme": text(&["scheme"]),
                "network": text(&["network"]),
                "asset": text(&["asset"]),
                "amount": text(&["amount", "maxAmountRequired"]),
                "payTo": text(&["payTo"]),
            })
        })
        .collect();
    (!accepts.is_empty()).then(|| Required {
        version: document.get("x402Version").and_then(Value::as_i64),
        accepts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_one_bodies_and_version_two_headers() {
        let v1 = br#"{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"1000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xAbC0000000000000000000000000000000000001","resource":"http://x/y"}]}"#;
        let read = requirements(None, v1).unwrap();
        assert_eq!(read.version, Some(1));
        assert_eq!(read.accepts[0]["amount"], "1000");
        assert_eq!(read.accepts[0]["network"], "base-sepolia");
        let v2 = json!({"x402Version": 2, "accepts": [{"scheme": "exact", "network": "eip155:84532", "amount": "5", "asset": "0x1", "payTo": "0x2"}]});
        let header = base64::engine::general_purpose::STANDARD.encode(v2.to_string());
        let read = requirements(Some(&header), b"{}").unwrap();
        assert_eq!(read.version, Some(2));
        assert_eq!(read.accepts[0]["payTo"], "0x2");
        assert_eq!(read.accepts[0]["amount"], "5");
        assert_eq!(
            requirements(None, br#"{"accepts":[{"scheme":"exact"}]}"#),
            None
        );
        assert_eq!(requirements(Some("not base64!"), b"<html>"), None);
    }
}
