//! A2A probes. A card: fetched and compared with the indexed one (canonical JSON equal). A JSON-RPC interface: asked for a task that does not exist (`GetTask`
//! with `A2A-Version: 1.0` for 1.x, `tasks/get` for 0.x, both in turn when the version is not
//! declared), up when it answers the spec's `TaskNotFoundError` (-32001). An HTTP+JSON
//! interface: the same task asked by `GET …/tasks/{id}` (`/v1/tasks/{id}` for 0.x), up when it
//! answers 404 with a JSON body. A card that claims an authenticated extended card has it asked
//! for too (`extended_card.rs`).

use super::extended_card;
use super::jsonrpc::{self, RpcError};
use super::prober::{answered, unanswered, unexpected_status, unknown_id};
use super::{Outcome, Prober, Reason, Status, Target};
use crate::documents::Request;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName};
use serde_json::{Value, json};
use tokio::time::Instant;
use url::Url;

/// The A2A error for a task that does not exist.
const TASK_NOT_FOUND: i64 = -32001;
/// JSON-RPC's error for a method the server does not have.
const METHOD_NOT_FOUND: i64 = -32601;

/// Fetches the card at `url` and compares it with the indexed one.
pub(super) async fn card(prober: &Prober, target: &Target, url: Url, deadline: Instant) -> Outcome {
    let request = Request::get(url.clone()).header(ACCEPT, "application/json");
    let (answer, latency) = match prober.send(&request, deadline).await {
        Ok(sent) => sent,
        Err(error) => return unanswered(target, &error),
    };
    if !(200..300).contains(&answer.status) {
        return unexpected_status(target, &answer, latency);
    }
    let outcome = answered(target, &answer, latency, Status::Up);
    let Ok(served) = serde_json::from_slice::<Value>(&answer.body) else {
        return outcome.failed(Status::Degraded, Reason::Protocol, "the card is not JSON");
    };
    let mut outcome = match target
        .indexed_card
        .as_deref()
        .map(serde_json::from_slice::<Value>)
    {
        // Not indexed yet: nothing to compare with.
        None => outcome,
        Some(Ok(indexed)) if same_card(&served, &indexed) => outcome,
        Some(_) => outcome.failed(
            Status::Degraded,
            Reason::CardDiffers,
            "the card served differs from the indexed one",
        ),
    };
    if extended_card::declared(&served) {
        let extended = extended_card::probe(prober, &served, &answer.final_url, deadline).await;
        let missing = extended["status"] == "missing";
        outcome.detail = json!({ "extendedCard": extended });
        if missing && outcome.status == Status::Up {
            outcome = outcome.failed(
                Status::Degraded,
                Reason::Protocol,
                "the card declares an extended card that is not served",
            );
        }
    }
    outcome
}

/// Whether two cards are the same: equal as canonical JSON (signatures included, so a card
/// edited under copied signatures differs).
fn same_card(served: &Value, indexed: &Value) -> bool {
    let canonical = |v: &Value| crate::canonical_json::to_string(v).ok();
    canonical(served).is_some() && canonical(served) == canonical(indexed)
}

/// Asks the JSON-RPC interface at `url` for a task that does not exist.
pub(super) async fn jsonrpc(
    prober: &Prober,
    target: &Target,
    url: Url,
    deadline: Instant,
) -> Outcome {
    let version = target.protocol_version.as_deref().unwrap_or_default();
    let methods: &[&str] = if version.starts_with("0.") {
        &["tasks/get"]
    } else if version.starts_with('1') {
        &["GetTask"]
    } else {
        &["GetTask", "tasks/get"]
    };
    let mut last = None;
    for method in methods {
        let id = unknown_id();
        let params = json!({"id": unknown_id()});
        let mut request = Request::post(url.clone(), jsonrpc::request(&id, method, params))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json");
        if *method == "GetTask" {
            request = request.header(HeaderName::from_static("a2a-version"), "1.0");
        }
        let (answer, latency) = match prober.send(&request, deadline).await {
            Ok(sent) => sent,
            Err(error) => return unanswered(target, &error),
        };
        let reply = jsonrpc::reply(&answer.body, &id);
        let outcome = answered(target, &answer, latency, Status::Up);
        let outcome = match reply {
            Some(Err(RpcError { code, message })) if code == TASK_NOT_FOUND => {
                with_detail(outcome, method, Some(code), &message)
            }
            Some(Err(RpcError { code, message })) => {
                let outcome = with_detail(outcome, method, Some(code), &message).failed(
                    Status::Degraded,
                    Reason::Protocol,
                    format!("{method} of an unknown task answered error {code}: {message}"),
                );
                if code == METHOD_NOT_FOUND {
                    last = Some(outcome);
                    continue;
                }
                outcome
            }
            Some(Ok(_)) => with_detail(outcome, method, None, "").failed(
                Status::Degraded,
                Reason::Protocol,
                format!("{method} of a made-up task id answered a task"),
            ),
            None if answer.status >= 300 => unexpected_status(target, &answer, latency),
            None => outcome.failed(
                Status::Degraded,
                Reason::Protocol,
                format!("{method}: no JSON-RPC 2.0 reply"),
            ),
        };
        return outcome;
    }
    last.expect("at least one method is tried")
}

fn with_detail(mut outcome: Outcome, method: &str, code: Option<i64>, message: &str) -> Outcome {
    outcome.detail = json!({"method": method, "errorCode": code, "errorMessage": message});
    outcome
}

/// Asks the HTTP+JSON interface at `url` for a task that does not exist.
pub(super) async fn rest(prober: &Prober, target: &Target, url: Url, deadline: Instant) -> Outcome {
    let version = target.protocol_version.as_deref().unwrap_or_default();
    let path = if version.starts_with("0.") {
        "v1/tasks/"
    } else {
        "tasks/"
    };
    let mut base = url.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    let Ok(task) = base.join(&format!("{path}{}", unknown_id())) else {
        return Outcome::of(target, Status::Blocked).failed(
            Status::Blocked,
            Reason::Unsupported,
            "no task URL under the interface's URL",
        );
    };
    let request = Request::get(task).header(ACCEPT, "application/json");
    let (answer, latency) = match prober.send(&request, deadline).await {
        Ok(sent) => sent,
        Err(error) => return unanswered(target, &error),
    };
    let json = serde_json::from_slice::<Value>(&answer.body).is_ok();
    match answer.status {
        404 if json => answered(target, &answer, latency, Status::Up),
        404 => answered(target, &answer, latency, Status::Up).failed(
            Status::Degraded,
            Reason::Protocol,
            "an unknown task answered 404 without a JSON error",
        ),
        200..=299 => answered(target, &answer, latency, Status::Up).failed(
            Status::Degraded,
            Reason::Protocol,
            "a made-up task id answered a task",
        ),
        _ => unexpected_status(target, &answer, latency),
    }
}
