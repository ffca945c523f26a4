//! JSON-RPC 2.0 as A2A and MCP speak it over HTTP: requests and notifications written, and the
//! reply to a request read from a JSON body or from a server-sent event stream (MCP's
//! streamable HTTP may answer either way).

use serde_json::{Value, json};

/// The body of a request `method` with `params` and `id`.
pub(super) fn request(id: &str, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// The body of a notification `method` (no id, no reply).
pub(super) fn notification(method: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method})
        .to_string()
        .into_bytes()
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RpcError {
    pub code: i64,
    pub message: String,
}

/// What the reply to request `id` said: its result or its error.
pub(super) type Reply = Result<Value, RpcError>;

/// The reply to request `id` in `body`: a JSON object or batch, or the `data:` of the events of
/// an event stream. `None` when there is no well-formed JSON-RPC 2.0 reply to it.
pub(super) fn reply(body: &[u8], id: &str) -> Option<Reply> {
    let text = std::str::from_utf8(body).ok()?;
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return find(&value, id);
    }
    events(text)
        .filter_map(|data| serde_json::from_str::<Value>(&data).ok())
        .find_map(|value| find(&value, id))
}

/// Whether `body` already holds a complete event with a JSON-RPC reply (any id), so an event
/// stream that stays open need not be read further. Only the events completed since `seen`
/// bytes (what an earlier call looked at) are read, so a stream of many small events costs
/// its length, not its square.
pub(super) fn stream_has_reply(body: &[u8], seen: usize) -> bool {
    // Events end at a blank line. Nothing new ended: nothing to read (a check the size of the
    // new bytes).
    let seen = seen.min(body.len());
    let new = &body[seen.saturating_sub(1)..];
    let Some(last_end) = new.windows(2).rposition(|w| w == b"\n\n") else {
        return false;
    };
    let to = seen.saturating_sub(1) + last_end + 2;
    // The events to read start after the last end before `seen`: one event back at most.
    let from = body[..seen]
        .windows(2)
        .rposition(|w| w == b"\n\n")
        .map_or(0, |i| i + 2);
    let Ok(text) = std::str::from_utf8(&body[from..to]) else {
        return false;
    };
    events(text)
        .filter_map(|data| serde_json::from_str::<Value>(&data).ok())
        .any(|value| value.get("id").is_some_and(|id| !id.is_null()) && is_reply(&value))
}

/// The `data` of each event of an event stream, its `data:` lines joined by newlines.
fn events(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split("\n\n")
        .flat_map(|block| block.split("\r\n\r\n"))
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
}

fn is_reply(value: &Value) -> bool {
    value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (value.get("result").is_some() || value.get("error").is_some())
}

/// The reply to `id` in a JSON value: itself, or an element of a batch.
fn find(value: &Value, id: &str) -> Option<Reply> {
    match value {
        Value::Array(items) => items.iter().find_map(|item| find(item, id)),
        Value::Object(_) if is_reply(value) => {
            let matches = match value.get("id") {
                Some(Value::String(s)) => s == id,
                Some(Value::Number(n)) => n.to_string() == id,
                // Only an error about an unreadable request may carry a null id.
                Some(Value::Null) => value
                    .pointer("/error/code")
                    .and_then(Value::as_i64)
                    .is_some_and(|code| matches!(code, -32700 | -32600)),
                _ => false,
            };
            if !matches {
                return None;
            }
            Some(match value.get("error") {
                Some(error) => Err(RpcError {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }),
                None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_reply_from_json_a_batch_or_an_event_stream() {
        let json = br#"{"jsonrpc":"2.0","id":"a","result":{"ok":true}}"#;
        assert_eq!(reply(json, "a"), Some(Ok(json!({"ok": true}))));
        assert_eq!(reply(json, "b"), None);
        let batch = br#"[{"jsonrpc":"2.0","id":"x","result":1},{"jsonrpc":"2.0","id":"a","error":{"code":-32001,"message":"Task not found"}}]"#;
        assert_eq!(
            reply(batch, "a"),
            Some(Err(RpcError {
                code: -32001,
                message: "Task not found".into()
            }))
        );
        let stream =
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n";
        assert_eq!(reply(stream, "1"), Some(Ok(json!({"tools": []}))));
        assert!(stream_has_reply(stream, 0));
        let partial = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,";
        assert!(!stream_has_reply(partial, 0));
        // Read a piece at a time: the event that completes in the last piece is found.
        let split = stream.len() - 5;
        assert!(!stream_has_reply(&stream[..split], 0));
        assert!(stream_has_reply(stream, split));
        let two = [b"data: {\"note\":1}\n\n".as_slice(), stream].concat();
        assert!(stream_has_reply(&two, 3));
        assert_eq!(reply(b"<html>", "1"), None);
        assert_eq!(
            reply(br#"{"id":"a","result":1}"#, "a"),
            None,
            "not JSON-RPC 2.0"
        );
    }
}
