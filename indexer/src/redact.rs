//! Secrets kept out of logs, errors, metrics and `/status`: RPC providers put API keys in the
//! URL path (`https://base-mainnet.g.alchemy.com/v2/KEY`) or query (`?apikey=`), and database
//! URLs carry passwords (`postgres://user:pass@host/db`). Everything that shows such a URL
//! shows [`url`] of it; text that may quote one (a transport error naming the URL it failed
//! on) goes through [`text`].

/// What replaces a URL's path and query, and a password.
const HIDDEN_PATH: &str = "/…";
const HIDDEN_PASSWORD: &str = "***";

/// `raw` with its secrets hidden: the scheme, host and port are kept; a password becomes
/// `***`; for web URLs (http, https, ws, wss) a path or query becomes `/…`, since providers put
/// keys there, and a user name without a password becomes `***` (`https://KEY@rpc…` is how
/// some take theirs); for other
/// URLs (databases) the user name and the path (the database) are kept, a query becomes `?…`.
/// Text that is not a URL is replaced whole, since what it holds cannot be told apart.
pub fn url(raw: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(raw.trim()) else {
        return "(unparsable URL)".into();
    };
    let web = matches!(parsed.scheme(), "http" | "https" | "ws" | "wss");
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some(HIDDEN_PASSWORD));
    } else if web && !parsed.username().is_empty() {
        let _ = parsed.set_username(HIDDEN_PASSWORD);
    }
    let mut shown = parsed.as_str().to_string();
    if web {
        let hidden =
            parsed.path() != "/" || parsed.query().is_some() || parsed.fragment().is_some();
        parsed.set_query(None);
        parsed.set_fragment(None);
        parsed.set_path("");
        shown = parsed.as_str().trim_end_matches('/').to_string();
        if hidden {
            shown.push_str(HIDDEN_PATH);
        }
    } else if parsed.query().is_some() || parsed.fragment().is_some() {
        parsed.set_query(None);
        parsed.set_fragment(None);
        shown = format!("{}?…", parsed.as_str());
    }
    shown.replace("%E2%80%A6", "…")
}

/// `message` with every URL in it (anything from a `scheme://` to the next blank, quote or
/// closing bracket) replaced by [`url`] of it.
pub fn text(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | ']' | '>' | '`'))
            .map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        if start == at {
            // "://" with no scheme before it: not a URL, keep it as it is.
            out.push_str(&rest[at..end]);
        } else {
            out.push_str(&url(&rest[start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_paths_and_queries_and_passwords_are_hidden() {
        for (raw, shown) in [
            (
                "https://base-mainnet.g.alchemy.com/v2/SECRETKEY",
                "https://base-mainnet.g.alchemy.com/…",
            ),
            (
                "https://rpc.example:8545/?apikey=SECRETKEY",
                "https://rpc.example:8545/…",
            ),
            (
                "https://mainnet.infura.io/v3/SECRETKEY#x",
                "https://mainnet.infura.io/…",
            ),
            ("wss://node.example/ws/SECRETKEY", "wss://node.example/…"),
            ("http://127.0.0.1:8545", "http://127.0.0.1:8545"),
            ("http://127.0.0.1:8545/", "http://127.0.0.1:8545"),
            (
                "https://user:SECRETKEY@rpc.example/",
                "https://user:***@rpc.example",
            ),
            (
                "postgres://indexer:SECRETKEY@db.internal:5432/agentindex",
                "postgres://indexer:***@db.internal:5432/agentindex",
            ),
            (
                "postgres://indexer:SECRETKEY@db/agentindex?sslmode=require&password=SECRETKEY",
                "postgres://indexer:***@db/agentindex?…",
            ),
            ("sqlite://data/agentindex.db", "sqlite://data/agentindex.db"),
            ("https://SECRETKEY@rpc.example/", "https://***@rpc.example"),
            ("not a url SECRETKEY", "(unparsable URL)"),
        ] {
            assert_eq!(url(raw), shown, "{raw}");
            assert!(!url(raw).contains("SECRETKEY"), "{raw}");
        }
    }

    #[test]
    fn urls_inside_messages_are_hidden_and_the_rest_kept() {
        let message = "error sending request for url (https://base-mainnet.g.alchemy.com/v2/SECRETKEY): connection refused; tried \"http://u:SECRETKEY@x.example/a\"";
        assert_eq!(
            text(message),
            "error sending request for url (https://base-mainnet.g.alchemy.com/…): connection refused; tried \"http://u:***@x.example/…\""
        );
        assert_eq!(text("no url here: a://"), "no url here: a://");
        assert_eq!(text("odd ://x"), "odd ://x");
    }
}
