//! Tracing set-up: human-readable lines (coloured on a terminal), JSON lines with
//! `LOG_FORMAT=json`, and the level from `RUST_LOG` (default `info`), with the RPC transport's
//! URL-carrying spans and the MCP SDK's per-request lines held back.

use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Below this level, alloy's HTTP transport wraps every request in a span that records the
/// full RPC URL, API key and all; its spans are kept at `info` (which shows none) unless
/// `RUST_LOG` names the crate itself.
const TRANSPORT_SPANS: &str = "alloy_transport_http=info";

/// The MCP SDK logs every session at `info` and every error answer (a client's unknown tool,
/// say) at `warn`: one line per request any client can cause, so it speaks only of its own
/// errors unless `RUST_LOG` names the crate itself.
const MCP_SDK: &str = "rmcp=error";

/// Installs the global subscriber; logs go to stderr so stdout stays for command output.
pub(crate) fn init() {
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let asked = std::env::var("RUST_LOG").unwrap_or_default();
    for (crate_name, directive) in [("alloy_transport_http", TRANSPORT_SPANS), ("rmcp", MCP_SDK)] {
        if !asked.contains(crate_name)
            && let Ok(directive) = directive.parse()
        {
            filter = filter.add_directive(directive);
        }
    }
    // Colours only on a terminal (and not under NO_COLOR): a log file or a collector gets plain
    // `key=value` text it can search.
    let colours = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colours)
        .with_writer(std::io::stderr);
    if std::env::var("LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json")) {
        builder.json().init();
    } else {
        builder.init();
    }
}
