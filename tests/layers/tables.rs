//! The layer tables `tests/layers.rs` checks the crates against: each crate's top-level
//! modules, bottom first, each with the modules it may import.

/// A crate's modules, bottom first, each with what it may import.
pub(super) type Layers = &'static [(&'static str, &'static [&'static str])];

/// Indexer modules, bottom first, with what each may import.
pub(super) const INDEXER: &[(&str, &[&str])] = &[
    ("primitives", &[]),
    ("metrics", &[]),
    ("redact", &[]),
    ("health", &[]),
    ("priority", &[]),
    ("schema", &[]),
    ("canonical_json", &[]),
    ("config", &["primitives", "redact"]),
    ("sources", &["primitives"]),
    (
        "rpc",
        &["primitives", "metrics", "redact", "config", "health"],
    ),
    ("documents", &["primitives", "metrics", "redact", "config"]),
    ("cardano", &["primitives", "metrics", "redact", "config"]),
    (
        "liveness",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "documents",
            "canonical_json",
        ],
    ),
    (
        "reputation",
        &["primitives", "config", "priority", "canonical_json"],
    ),
    ("agents", &["primitives", "sources", "documents"]),
    (
        "store",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "sources",
            "documents",
            "cardano",
            "liveness",
            "reputation",
            "agents",
            "priority",
            "schema",
            "canonical_json",
        ],
    ),
    (
        "follower",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "health",
            "sources",
            "rpc",
            "cardano",
            "reputation",
            "agents",
            "store",
        ],
    ),
    (
        "feed",
        &[
            "primitives",
            "config",
            "reputation",
            "store",
            "priority",
            "canonical_json",
        ],
    ),
    (
        "engine",
        &[
            "primitives",
            "metrics",
            "priority",
            "redact",
            "config",
            "health",
            "sources",
            "rpc",
            "documents",
            "cardano",
            "liveness",
            "reputation",
            "agents",
            "store",
            "follower",
            "feed",
        ],
    ),
];

/// API modules, bottom first, with what each may import.
pub(super) const API: &[(&str, &[&str])] = &[
    ("lru", &[]),
    ("budget", &[]),
    ("cache_key", &[]),
    ("client_error", &[]),
    ("low_priority_lane", &[]),
    ("cache", &["cache_key", "lru", "low_priority_lane"]),
    ("metrics", &[]),
    ("term_counts", &[]),
    ("read", &["term_counts"]),
    ("row_budget", &[]),
    ("explorer", &[]),
    ("chain_status", &[]),
    ("client", &[]),
    ("time_share", &["client"]),
    ("connections", &["client"]),
    (
        "limits",
        &["metrics", "client", "time_share", "low_priority_lane"],
    ),
    ("changes", &["read"]),
    ("facet_cache", &["cache", "read", "lru"]),
    ("feed_spool", &[]),
    (
        "feed_cache",
        &["lru", "client_error", "client", "feed_spool"],
    ),
    (
        "state",
        &[
            "cache",
            "changes",
            "metrics",
            "facet_cache",
            "feed_cache",
            "term_counts",
        ],
    ),
    (
        "feeds",
        &[
            "state",
            "client_error",
            "feed_cache",
            "feed_spool",
            "client",
        ],
    ),
    (
        "graphql",
        &[
            "read",
            "state",
            "changes",
            "cache",
            "metrics",
            "facet_cache",
            "client_error",
            "budget",
            "row_budget",
            "time_share",
        ],
    ),
    (
        "http",
        &[
            "graphql",
            "state",
            "metrics",
            "limits",
            "explorer",
            "cache_key",
            "client_error",
            "row_budget",
            "chain_status",
        ],
    ),
    (
        "subgraph",
        &[
            "read",
            "metrics",
            "state",
            "http",
            "cache_key",
            "client_error",
            "budget",
            "graphql",
            "row_budget",
        ],
    ),
    (
        "websocket",
        &["client", "connections", "graphql", "time_share"],
    ),
    (
        "mcp",
        &[
            "graphql",
            "state",
            "metrics",
            "read",
            "client_error",
            "low_priority_lane",
        ],
    ),
    ("discovery", &["state", "read", "client_error", "graphql"]),
    (
        "server",
        &[
            "graphql",
            "state",
            "feeds",
            "http",
            "subgraph",
            "limits",
            "metrics",
            "explorer",
            "connections",
            "websocket",
            "time_share",
            "low_priority_lane",
            "mcp",
            "discovery",
        ],
    ),
];

/// The binary's modules (`src/`), bottom first, with what each may import.
pub(super) const BINARY: &[(&str, &[&str])] = &[
    ("backup", &[]),
    ("card_check", &[]),
    ("copy", &[]),
    ("logging", &[]),
    ("migrate", &[]),
    ("networks", &[]),
    ("progress", &[]),
    ("shutdown", &[]),
    ("probe", &["card_check"]),
    ("index", &["progress", "shutdown"]),
    ("serve", &["progress", "shutdown"]),
    ("dev", &["serve"]),
    (
        "cli",
        &[
            "backup",
            "card_check",
            "copy",
            "dev",
            "index",
            "migrate",
            "networks",
            "probe",
            "serve",
        ],
    ),
];

/// The provider emulator's modules, bottom first, with what each may import.
pub(super) const EMULATOR: &[(&str, &[&str])] = &[
    ("costs", &[]),
    ("wording", &[]),
    ("counters", &["costs"]),
    ("server", &["costs", "wording", "counters"]),
];

/// The contract bindings' modules, bottom first, with what each may import.
pub(super) const BINDINGS: &[(&str, &[&str])] = &[
    ("bindings", &[]),
    ("gas_headroom", &[]),
    ("options", &[]),
    ("signing", &[]),
    ("tied", &[]),
    ("tools", &[]),
    ("artifacts", &["tools"]),
    ("anvil", &["options", "tied"]),
    ("error", &["anvil"]),
    ("confirm", &["error"]),
    ("deploy", &["bindings", "confirm", "error", "options"]),
    (
        "devnet",
        &[
            "bindings",
            "anvil",
            "confirm",
            "deploy",
            "error",
            "gas_headroom",
            "options",
            "tools",
        ],
    ),
    ("demo", &["bindings", "devnet", "signing"]),
    ("network_load", &["bindings", "devnet"]),
    ("workload", &["devnet"]),
];

/// Every crate of the workspace: its source folder and its layer table.
pub(super) const CRATES: &[(&str, Layers)] = &[
    ("indexer/src", INDEXER),
    ("api/src", API),
    ("src", BINARY),
    ("emulator/src", EMULATOR),
    ("contracts/bindings/src", BINDINGS),
];
