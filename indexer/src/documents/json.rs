//! Reading untrusted JSON field by field: each accessor returns the value when it has the
//! expected type and records a warning naming the path when it does not, so one wrong field is
//! left out and never loses the rest of the document. Only a document that is not a JSON object
//! at all is an error here; whether a missing piece makes the document useless is for the reader
//! of each kind to say.

use super::lint::Report;
use serde_json::{Map, Value};

/// An object being read, with its JSON path.
pub(super) struct Fields<'a> {
    pub(super) map: &'a Map<String, Value>,
    pub(super) path: String,
}

impl<'a> Fields<'a> {
    /// The object at `value`, or a lint when it is something else.
    pub(super) fn of(
        value: &'a Value,
        path: impl Into<String>,
        report: &mut Report,
        code: &'static str,
    ) -> Option<Self> {
        let path = path.into();
        match value {
            Value::Object(map) => Some(Self { map, path }),
            other => {
                let message = format!("expected an object, found {}", kind(other));
                match path.as_str() {
                    "$" => report.error(code, &path, message),
                    _ => report.warning(code, &path, message),
                }
                None
            }
        }
    }

    /// The path of `key` inside this object.
    pub(super) fn path_of(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// The first of `keys` that is present, with the key found.
    pub(super) fn any(&self, keys: &[&'static str]) -> Option<(&'static str, &'a Value)> {
        keys.iter()
            .find_map(|k| self.map.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
    }

    /// A string under the first present of `keys`. Masumi's arrays of short chunks are joined.
    pub(super) fn string(&self, keys: &[&'static str], report: &mut Report) -> Option<String> {
        let (key, value) = self.any(keys)?;
        text(value, &self.path_of(key), report)
    }

    /// A boolean under the first present of `keys`; `{"enabled": b}` counts as `b`.
    pub(super) fn boolean(&self, keys: &[&'static str], report: &mut Report) -> Option<bool> {
        let (key, value) = self.any(keys)?;
        match value {
            Value::Bool(b) => Some(*b),
            Value::Object(inner) if inner.get("enabled").is_some_and(Value::is_boolean) => {
                inner.get("enabled").and_then(Value::as_bool)
            }
            Value::String(s)
                if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") =>
            {
                report.warning(
                    "json.boolean.as_string",
                    self.path_of(key),
                    format!("boolean written as the string {s:?}"),
                );
                Some(s.eq_ignore_ascii_case("true"))
            }
            other => {
                report.warning(
                    "json.type.boolean",
                    self.path_of(key),
                    format!("expected a boolean, found {}", kind(other)),
                );
                None
            }
        }
    }

    /// The items of an array under the first present of `keys`, with their paths.
    pub(super) fn array(
        &self,
        keys: &[&'static str],
        report: &mut Report,
    ) -> Vec<(String, &'a Value)> {
        let Some((key, value)) = self.any(keys) else {
            return Vec::new();
        };
        let path = self.path_of(key);
        match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| (format!("{path}[{i}]"), item))
                .collect(),
            other => {
                report.warning(
                    "json.type.array",
                    path,
                    format!("expected an array, found {}", kind(other)),
                );
                Vec::new()
            }
        }
    }

    /// The strings of an array under the first present of `keys`; other items are linted.
    pub(super) fn strings(&self, keys: &[&'static str], report: &mut Report) -> Vec<String> {
        self.array(keys, report)
            .into_iter()
            .filter_map(|(path, item)| text(item, &path, report))
            .collect()
    }

    /// The object under the first present of `keys`.
    pub(super) fn object(&self, keys: &[&'static str], report: &mut Report) -> Option<Fields<'a>> {
        let (key, value) = self.any(keys)?;
        Fields::of(value, self.path_of(key), report, "json.type.object")
    }
}

/// A string value; an array of strings (Masumi's chunks of at most 63 characters) is joined,
/// numbers are taken as their decimal text.
pub(super) fn text(value: &Value, path: &str, report: &mut Report) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) if !parts.is_empty() && parts.iter().all(Value::is_string) => {
            report.info(
                "json.string.chunked",
                path,
                format!("string given as {} chunks, joined", parts.len()),
            );
            Some(parts.iter().filter_map(Value::as_str).collect())
        }
        Value::Number(n) => Some(n.to_string()),
        other => {
            report.warning(
                "json.type.string",
                path,
                format!("expected a string, found {}", kind(other)),
            );
            None
        }
    }
}

/// The JSON type of `value`, for messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `bytes` as a JSON document, or records why it is not one.
pub(super) fn parse(bytes: &[u8], report: &mut Report) -> Option<Value> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.trim_start_matches('\u{feff}'),
        Err(error) => {
            report.error(
                "document.encoding",
                "$",
                format!("not UTF-8 (invalid byte at offset {})", error.valid_up_to()),
            );
            return None;
        }
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Some(value),
        Err(error) => {
            report.error("document.json", "$", format!("not JSON: {error}"));
            None
        }
    }
}
