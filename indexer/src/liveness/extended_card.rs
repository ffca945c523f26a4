//! The authenticated extended card an A2A card says it has (`capabilities.extendedAgentCard`
//! in 1.0, `supportsAuthenticatedExtendedCard` in 0.3): asked for on the card's JSON-RPC
//! interface (`GetExtendedAgentCard`, or 0.3's `agent/getAuthenticatedExtendedCard`), with the
//! credentials the operator configured for that host when there are any. An authentication
//! challenge (401 or 403) counts as present; a card answered is read like any card and its
//! skills kept; an answer that the method or the card is missing is the card's claim not held.

use super::Prober;
use super::jsonrpc;
use super::prober::unknown_id;
use crate::documents::{Report, Request, parse_card};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName};
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

/// JSON-RPC's error for a method the server does not have.
const METHOD_NOT_FOUND: i64 = -32601;
/// A2A's error for an extended card the server has not configured.
const NOT_CONFIGURED: i64 = -32007;
/// Skills kept of an extended card at most.
const MAX_SKILLS: usize = 100;

/// Whether `card` says it has an extended card.
pub(super) fn declared(card: &Value) -> bool {
    card.pointer("/capabilities/extendedAgentCard") == Some(&Value::Bool(true))
        || card.get("supportsAuthenticatedExtendedCard") == Some(&Value::Bool(true))
}

/// What asking for the extended card of `card`, served from `card_url`, found: `{status, …}`
/// with status `challenged`, `fetched` (with the skills), `missing` or `unanswered`. Credentials
/// go only to an interface on the card's own origin: a card cannot aim them elsewhere.
pub(super) async fn probe(
    prober: &Prober,
    card: &Value,
    card_url: &Url,
    deadline: Instant,
) -> Value {
    let Some((url, version)) = jsonrpc_interface(card) else {
        return json!({"status": "missing", "error": "the card has no JSON-RPC interface to ask"});
    };
    let modern = !version.as_deref().unwrap_or("1").starts_with("0.");
    let method = if modern {
        "GetExtendedAgentCard"
    } else {
        "agent/getAuthenticatedExtendedCard"
    };
    let id = unknown_id();
    let mut request = Request::post(url.clone(), jsonrpc::request(&id, method, json!({})))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json");
    if modern {
        request = request.header(HeaderName::from_static("a2a-version"), "1.0");
    }
    let same_origin = url.origin() == card_url.origin();
    let credential = prober.credential(&url).filter(|_| same_origin);
    let credentialed = match credential {
        Some((name, value)) => {
            request = request.host_only_header(name.clone(), value);
            true
        }
        None => false,
    };
    let answer = match prober.send(&request, deadline).await {
        Ok((answer, _)) => answer,
        Err(error) => {
            return json!({"status": "unanswered", "method": method, "error": error.to_string()});
        }
    };
    if matches!(answer.status, 401 | 403) {
        return json!({
            "status": "challenged", "method": method, "httpStatus": answer.status,
            "credentialed": credentialed,
        });
    }
    match jsonrpc::reply(&answer.body, &id) {
        Some(Ok(result)) => read(&result, method),
        Some(Err(error)) if matches!(error.code, METHOD_NOT_FOUND | NOT_CONFIGURED) => json!({
            "status": "missing", "method": method, "errorCode": error.code,
            "error": error.message,
        }),
        // Any other refusal (servers word authentication errors their own way).
        Some(Err(error)) => json!({
            "status": "challenged", "method": method, "errorCode": error.code,
            "error": error.message, "credentialed": credentialed,
        }),
        None => json!({
            "status": "missing", "method": method, "httpStatus": answer.status,
            "error": "no JSON-RPC 2.0 reply",
        }),
    }
}

/// An extended card answered, read like any card: its skills, or why it does not read.
fn read(result: &Value, method: &str) -> Value {
    let mut report = Report::default();
    let bytes = result.to_string().into_bytes();
    let Some(card) = parse_card(&bytes, &mut report) else {
        return json!({"status": "missing", "method": method, "error": "the answer is not a card"});
    };
    let skills: Vec<Value> = card
        .skills
        .iter()
        .take(MAX_SKILLS)
        .map(|s| json!({"id": s.id, "name": s.name, "description": s.description, "tags": s.tags}))
        .collect();
    json!({"status": "fetched", "method": method, "skills": skills})
}

/// The card's JSON-RPC interface to ask, with its protocol version: a 1.x one first.
fn jsonrpc_interface(card: &Value) -> Option<(Url, Option<String>)> {
    let mut interfaces: Vec<(Url, Option<String>)> = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|i| i.get("protocolBinding").and_then(Value::as_str) == Some("JSONRPC"))
        .filter_map(|i| {
            let url = Url::parse(i.get("url")?.as_str()?).ok()?;
            let version = i.get("protocolVersion").and_then(Value::as_str);
            Some((url, version.map(str::to_string)))
        })
        .collect();
    // A 0.3 card: its `url`, when its preferred transport is JSON-RPC (the default).
    let transport = card.get("preferredTransport").and_then(Value::as_str);
    if let Some(url) = card.get("url").and_then(Value::as_str)
        && transport.is_none_or(|t| t == "JSONRPC")
        && let Ok(url) = Url::parse(url)
    {
        let version = card.get("protocolVersion").and_then(Value::as_str);
        interfaces.push((url, version.map(str::to_string)));
    }
    interfaces.sort_by_key(|(_, version)| version.as_deref().is_some_and(|v| v.starts_with("0.")));
    interfaces.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_claim_and_the_interface_in_either_version() {
        let v1 = json!({"capabilities": {"extendedAgentCard": true}, "supportedInterfaces": [
            {"url": "https://a.example/rpc03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://a.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]});
        assert!(declared(&v1));
        let (url, version) = jsonrpc_interface(&v1).unwrap();
        assert_eq!(
            (url.as_str(), version.as_deref()),
            ("https://a.example/rpc", Some("1.0"))
        );
        let v03 = json!({"supportsAuthenticatedExtendedCard": true, "url": "https://b.example/", "protocolVersion": "0.3.0"});
        assert!(declared(&v03));
        assert_eq!(jsonrpc_interface(&v03).unwrap().1.as_deref(), Some("0.3.0"));
        assert!(!declared(
            &json!({"capabilities": {"extendedAgentCard": false}})
        ));
        let grpc_only = json!({"url": "https://c.example/", "preferredTransport": "GRPC"});
        assert_eq!(jsonrpc_interface(&grpc_only), None);
    }
}
