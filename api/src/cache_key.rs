//! The response cache's keys: one per question, however it is spelled. The query text is reduced
//! to its tokens (GraphQL ignores whitespace, commas and comments outside strings, so those never
//! make a new key; strings are kept byte for byte), joined with the operation name, the
//! variables and the endpoint; a key longer than [`MAX_KEY_BYTES`] is replaced by its SHA-256,
//! so a megabyte of variables costs the cache 71 bytes of key, not a megabyte.

use sha2::{Digest, Sha256};

/// Longest key kept as text; longer ones are hashed. Long enough that most dashboard queries
/// stay readable when debugging, short enough that keys are a small part of the cache's bytes.
pub(crate) const MAX_KEY_BYTES: usize = 512;

/// A response cache key, at most [`MAX_KEY_BYTES`] long.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey(String);

impl CacheKey {
    /// The key of a request to `endpoint` (`graphql`, or `subgraph` with its chain).
    pub(crate) fn of(endpoint: &str, request: &async_graphql::Request) -> Self {
        let variables = serde_json::to_string(&request.variables).unwrap_or_default();
        let mut key = String::with_capacity(request.query.len() + variables.len() + 32);
        key.push_str(endpoint);
        key.push('\n');
        key.push_str(request.operation_name.as_deref().unwrap_or(""));
        key.push('\n');
        tokens(&request.query, &mut key);
        key.push('\n');
        key.push_str(&variables);
        Self::bounded(key)
    }

    fn bounded(key: String) -> Self {
        if key.len() <= MAX_KEY_BYTES {
            return Self(key);
        }
        let digest = Sha256::digest(key.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Self(format!("sha256:{hex}"))
    }

    /// The key's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Appends the tokens of GraphQL `text` to `out`, one space between tokens. Whitespace, commas,
/// byte-order marks and `#` comments are dropped; strings (plain and block) are copied whole,
/// escapes included, so only what GraphQL itself ignores is ever ignored here. Text that is not
/// valid GraphQL still maps to a key (it is refused later and its answer never cached).
fn tokens(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut first = true;
    while at < bytes.len() {
        let start = at;
        match bytes[at] {
            b' ' | b'\t' | b'\n' | b'\r' | b',' => {
                at += 1;
                continue;
            }
            b'#' => {
                while at < bytes.len() && !matches!(bytes[at], b'\n' | b'\r') {
                    at += 1;
                }
                continue;
            }
            b'"' if bytes[at..].starts_with(b"\"\"\"") => at = block_string_end(bytes, at + 3),
            b'"' => at = string_end(bytes, at + 1),
            byte if is_punctuator(byte) => at += 1,
            _ if bytes[at..].starts_with(BOM) => {
                at += BOM.len();
                continue;
            }
            _ => {
                while at < bytes.len() && is_word(bytes[at]) && !bytes[at..].starts_with(BOM) {
                    at += 1;
                }
            }
        }
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(&text[start..at]);
    }
}

/// The byte-order mark, which GraphQL ignores like whitespace.
const BOM: &[u8] = "\u{feff}".as_bytes();

fn is_punctuator(byte: u8) -> bool {
    matches!(
        byte,
        b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|' | b'}'
    )
}

/// Part of a name, number, `...` or anything else that is not a separator, comment, string or
/// punctuator.
fn is_word(byte: u8) -> bool {
    !matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | b',' | b'#' | b'"') && !is_punctuator(byte)
}

/// Where a plain string whose body starts at `at` ends (after its closing quote, or at the end
/// of the text).
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Where a block string whose body starts at `at` ends (after its closing `"""`).
fn block_string_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        if bytes[at..].starts_with(b"\\\"\"\"") {
            at += 4;
        } else if bytes[at..].starts_with(b"\"\"\"") {
            return at + 3;
        } else {
            at += 1;
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(query: &str) -> CacheKey {
        CacheKey::of("graphql", &async_graphql::Request::new(query))
    }

    #[test]
    fn spellings_of_one_query_share_a_key() {
        let plain = key("query Top { agents(first: 10, chainIds: [1, 2]) { id name } }");
        for variant in [
            "query Top{agents(first:10 chainIds:[1 2]){id name}}",
            "  query   Top {\n  agents(first: 10,,, chainIds: [1,2]) { # the ids\n id\r\n name } }\n",
            "\u{feff}query Top { agents(first: 10, chainIds: [1, 2]) { id, name, } } # end",
        ] {
            assert_eq!(key(variant), plain, "{variant:?}");
        }
    }

    #[test]
    fn what_graphql_does_not_ignore_makes_a_new_key() {
        let base = key(r#"{ agents(search: "a b") { id } }"#);
        for different in [
            r#"{ agents(search: "a  b") { id } }"#,
            r#"{ agents(search: "a, b") { id } }"#,
            r#"{ agents(search: "a #b") { id } }"#,
            r#"{ agents(search: """a b""") { id } }"#,
            r#"{ agents(search: "a b") { id name } }"#,
            r#"{ agents(search: "a b") { idname } }"#,
        ] {
            assert_ne!(key(different), base, "{different}");
        }
        assert_ne!(
            key(r#"{ a(s: "x\" y") }"#),
            key(r#"{ a(s: "x\"  y") }"#),
            "an escaped quote does not end the string"
        );
        assert_ne!(
            key("{ a(s: \"\"\"x \\\"\"\" y\"\"\") }"),
            key("{ a(s: \"\"\"x \\\"\"\"  y\"\"\") }"),
            "an escaped triple quote does not end the block string"
        );
        let request = |name: &str| {
            CacheKey::of(
                "graphql",
                &async_graphql::Request::new("query A { a } query B { b }").operation_name(name),
            )
        };
        assert_ne!(request("A"), request("B"));
        let on = |endpoint| CacheKey::of(endpoint, &async_graphql::Request::new("{ a }"));
        assert_ne!(on("graphql"), on("subgraph:1"));
    }

    #[test]
    fn a_megabyte_of_variables_makes_a_short_key_that_still_tells_requests_apart() {
        let big = |fill: &str| {
            let variables = serde_json::json!({ "search": fill.repeat(1 << 20) });
            let request = async_graphql::Request::new("query($search: String) { a }")
                .variables(async_graphql::Variables::from_json(variables));
            CacheKey::of("graphql", &request)
        };
        let (a, b) = (big("a"), big("b"));
        assert!(a.len() <= MAX_KEY_BYTES, "{} bytes", a.len());
        assert_ne!(a, b);
        assert_eq!(a, big("a"));
    }
}
