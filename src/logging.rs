//! Tracing set-up: human-readable lines on a terminal, JSON lines with `LOG_FORMAT=json`, and the
//! level from `RUST_LOG` (default `info`), with the RPC transport's URL-carrying spans held back.

use tracing_subscriber::EnvFilter;

/// Below this level, alloy's HTTP transport wraps every request in a span that records the
/// full RPC URL, API key and all; its spans are kept at `info` (which shows none) unless
/// `RUST_LOG` names the crate itself.
const TRANSPORT_SPANS: &str = "alloy_transport_http=info";

/// Installs the global subscriber; logs go to stderr so stdout stays for command output.
pub(crate) fn init() {
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let named = std::env::var("RUST_LOG").is_ok_and(|v| v.contains("alloy_transport_http"));
    if !named && let Ok(directive) = TRANSPORT_SPANS.parse() {
        filter = filter.add_directive(directive);
    }
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::env::var("LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json")) {
        builder.json().init();
    } else {
        builder.init();
    }
}
