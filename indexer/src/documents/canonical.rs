//! The bytes an Agent Card signature may cover: RFC 8785 (JCS) canonical JSON of the card
//! without its `signatures`, in each variant the official SDKs produce (empty values dropped,
//! non-ASCII escaped, protobuf defaults dropped, cut down to the v1.0 schema). See
//! [`super::signature`] for why each variant exists.

use serde_json::Value;

/// The canonical bytes signers may have signed: JCS of the card without `signatures`, as is,
/// with empty values dropped (also with non-ASCII escaped), and with protobuf defaults dropped.
pub fn canonical_variants(card: &Value) -> Vec<Vec<u8>> {
    let mut unsigned = card.clone();
    if let Some(map) = unsigned.as_object_mut() {
        map.remove("signatures");
    }
    let mut variants = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        if !variants.contains(&bytes) {
            variants.push(bytes);
        }
    };
    if let Ok(bytes) = serde_jcs::to_vec(&unsigned) {
        push(bytes);
    }
    let pruned = drop_empty(&unsigned, false).unwrap_or(Value::Object(Default::default()));
    if let Ok(bytes) = serde_jcs::to_vec(&pruned) {
        push(escape_non_ascii(&bytes));
        push(bytes);
    }
    // Protobuf-based serialisers also leave out `false` and `0`.
    let defaults = drop_empty(&unsigned, true).unwrap_or(Value::Object(Default::default()));
    if let Ok(bytes) = serde_jcs::to_vec(&defaults) {
        push(bytes);
    }
    // The SDKs sign the v1.0 form; a server that adds v0.3 fields for old clients serves more
    // than was signed, so the card is also tried cut down to the v1.0 schema.
    let v1 = v1_fields(&unsigned);
    for defaults in [false, true] {
        let cut = drop_empty(&v1, defaults).unwrap_or(Value::Object(Default::default()));
        if let Ok(bytes) = serde_jcs::to_vec(&cut) {
            push(bytes);
        }
    }
    variants
}

/// Fields of the A2A v1.0 `AgentCard` schema, per object kind.
const V1_CARD: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "iconUrl",
];
const V1_INTERFACE: &[&str] = &["url", "protocolBinding", "tenant", "protocolVersion"];
const V1_PROVIDER: &[&str] = &["url", "organization"];
const V1_CAPABILITIES: &[&str] = &[
    "streaming",
    "pushNotifications",
    "extensions",
    "extendedAgentCard",
];
const V1_EXTENSION: &[&str] = &["uri", "description", "required", "params"];
const V1_SKILL: &[&str] = &[
    "id",
    "name",
    "description",
    "tags",
    "examples",
    "inputModes",
    "outputModes",
    "securityRequirements",
];

/// The card with only the fields the v1.0 schema defines (security schemes and extension
/// params are kept whole).
fn v1_fields(card: &Value) -> Value {
    fn keep(value: &Value, fields: &[&str]) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| fields.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    fn each(value: &Value, fields: &[&str]) -> Value {
        match value {
            Value::Array(items) => Value::Array(items.iter().map(|i| keep(i, fields)).collect()),
            other => other.clone(),
        }
    }
    let mut out = keep(card, V1_CARD);
    if let Value::Object(map) = &mut out {
        if let Some(v) = map.get_mut("supportedInterfaces") {
            *v = each(v, V1_INTERFACE);
        }
        if let Some(v) = map.get_mut("provider") {
            *v = keep(v, V1_PROVIDER);
        }
        if let Some(v) = map.get_mut("skills") {
            *v = each(v, V1_SKILL);
        }
        if let Some(caps) = map.get_mut("capabilities") {
            *caps = keep(caps, V1_CAPABILITIES);
            if let Some(ext) = caps.get_mut("extensions") {
                *ext = each(ext, V1_EXTENSION);
            }
        }
    }
    out
}

/// The value without empty strings, arrays, objects and nulls, recursively (`None` when the
/// value itself is empty); with `defaults`, without `false` and `0` either.
fn drop_empty(value: &Value, defaults: bool) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Bool(false) if defaults => None,
        Value::Number(n) if defaults && n.as_f64() == Some(0.0) => None,
        Value::Array(items) => {
            let kept: Vec<Value> = items
                .iter()
                .filter_map(|v| drop_empty(v, defaults))
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| drop_empty(v, defaults).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

/// JSON text with every non-ASCII character written as `\uXXXX` (surrogate pairs beyond the
/// BMP), as Python's `json.dumps(ensure_ascii=True)` writes it.
fn escape_non_ascii(json: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(json);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}
