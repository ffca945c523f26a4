//! What a probe keeps of a remote answer, made safe to store and serve: text without control
//! characters (PostgreSQL refuses NUL in text; terminals obey escape sequences) and cut to a
//! length, and an outcome's detail held to a size, so no endpoint can make its row, or the
//! summaries that read it, large.

use super::Outcome;
use serde_json::Value;

/// Characters kept of any one text taken from an answer.
pub const MAX_TEXT: usize = 500;
/// Bytes an outcome's detail may take as JSON; past it, its lists are cut.
const MAX_DETAIL_BYTES: usize = 48 << 10;

/// `text` without control characters, at most `max` characters.
pub fn text(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// `outcome` with every text it carries cleaned, and its detail within its size.
pub fn outcome(mut outcome: Outcome) -> Outcome {
    outcome.error = outcome.error.map(|e| text(&e, MAX_TEXT));
    outcome.protocol_version = outcome.protocol_version.map(|v| text(&v, 64));
    clean_value(&mut outcome.detail);
    while outcome.detail.to_string().len() > MAX_DETAIL_BYTES
        && halve_longest_list(&mut outcome.detail)
    {}
    outcome
}

fn clean_value(value: &mut Value) {
    match value {
        Value::String(s) => *s = text(s, MAX_TEXT),
        Value::Array(items) => items.iter_mut().for_each(clean_value),
        Value::Object(map) => {
            let cleaned: serde_json::Map<String, Value> = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    clean_value(&mut v);
                    (text(&k, 64), v)
                })
                .collect();
            *map = cleaned;
        }
        _ => {}
    }
}

/// Halves the longest list in `value`; false when there is none left to cut.
fn halve_longest_list(value: &mut Value) -> bool {
    fn longest(value: &mut Value) -> Option<&mut Vec<Value>> {
        let mut best: Option<&mut Vec<Value>> = None;
        let children: Vec<&mut Value> = match value {
            Value::Array(items) => {
                if items.len() > 1 {
                    return Some(items);
                }
                items.iter_mut().collect()
            }
            Value::Object(map) => map.values_mut().collect(),
            _ => return None,
        };
        for child in children {
            if let Some(list) = longest(child)
                && best.as_ref().is_none_or(|b| list.len() > b.len())
            {
                best = Some(list);
            }
        }
        best
    }
    match longest(value) {
        Some(list) => {
            list.truncate(list.len() / 2);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liveness::{Kind, Status, Target};
    use serde_json::json;

    #[test]
    fn control_characters_go_and_sizes_hold() {
        assert_eq!(text("a\u{0}b\u{1b}[31mc", 10), "ab[31mc");
        assert_eq!(text(&"x".repeat(900), MAX_TEXT).len(), MAX_TEXT);
        let mut huge = Outcome::of(&Target::new(Kind::Mcp, "https://a.example"), Status::Up);
        let tools: Vec<Value> = (0..5_000)
            .map(|i| json!({"name": format!("tool\u{0}{i}"), "description": "d".repeat(400)}))
            .collect();
        huge.detail = json!({"server": {"name": "s\u{0}"}, "tools": tools});
        huge.error = Some("bad\u{0}".into());
        let cleaned = outcome(huge);
        let stored = cleaned.detail.to_string();
        assert!(stored.len() <= MAX_DETAIL_BYTES, "{}", stored.len());
        assert!(!stored.contains("\\u0000"));
        assert_eq!(cleaned.detail["server"]["name"], "s");
        assert!(cleaned.detail["tools"].as_array().unwrap().len() > 10);
        assert_eq!(cleaned.error.as_deref(), Some("bad"));
    }
}
