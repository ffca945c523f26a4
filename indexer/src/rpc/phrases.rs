//! The words providers answer in, collected provider by provider: what they say when a range
//! holds too many results or spans too many blocks, when a failure will pass, and when a method
//! is missing. `classify.rs` reads errors by them.

/// Words in which providers refuse an `eth_getLogs` for the number or size of its results, and
/// who says them. Matched in lower case; the full list with examples is in the tests
/// (`classify_tests.rs`).
pub(super) const RESULT_CAP_PHRASES: &[&str] = &[
    "log response size exceeded",            // Alchemy
    "query returned more than",              // Infura, geth, Polygon zkEVM
    "query exceeds max results",             // reth, LlamaRPC, Ankr
    "logs matched by query exceeds limit",   // Arbitrum Nitro
    "backend response too large",            // Optimism's public node
    "response size should not greater than", // 1RPC
    "response size exceeded",                // Chainstack, GetBlock
    "response is too big",                   // Nethermind
    "exceed max logs",                       // geth (log query limit)
    "too many logs",                         // Erigon
    "too many results",                      // generic
    "result set too large",                  // generic
    "results exceed",                        // BlockPI
];

/// Words in which providers refuse an `eth_getLogs` for the width of its block range.
pub(super) const RANGE_CAP_PHRASES: &[&str] = &[
    "block range too large",                      // Base public node, Erigon
    "block range is too large",                   // Optimism public node, dRPC
    "range is too large",                         // Merkle
    "block range is too wide",                    // Ankr, Moonbeam
    "exceed maximum block range",                 // geth --rpc.rangelimit, PublicNode
    "maximum block range",                        // PublicNode
    "exceeds max block range",                    // reth, Hyperliquid, LlamaRPC
    "block range limit exceeded",                 // Chainstack
    "requested too many blocks",                  // Avalanche C-Chain
    "max range:",                                 // Cloudflare
    "maximum allowed number of requested blocks", // thirdweb
    "block range",                                // Alchemy "up to a 500 block range", Aurora
    "blocks range",                               // QuickNode
    "limited to a",                               // QuickNode, Blast, 1RPC
    "exceeds the range allowed",                  // Blast (paid)
    "please limit the query to at most",          // Coinbase Developer Platform
    "block range greater than",                   // Swell, op-geth forks
    "block range exceeds",                        // Somnia
    "query must be smaller than size",            // Harmony
    "blocks distance",                            // Ankr (TAC)
    "range exceeds maximum",                      // Besu
    "range limit",                                // Besu, Tenderly
    "range too large",                            // generic
    "range too wide",                             // generic
    "ranges over",                                // dRPC's free tier
];

/// Words that name a range or a result cap only together with one of these.
pub(super) const LIMIT_WORDS: &[&str] = &[
    "too large",
    "too wide",
    "too many",
    "exceed",
    "max",
    "limit",
    "up to",
    "at most",
    "greater than",
    "smaller than",
    "allowed",
    "not supported",
];

/// Words in which providers refuse the credentials a request came with (the API key in the
/// URL), in a JSON-RPC error or an HTTP error's body.
pub(super) const REJECTED_PHRASES: &[&str] = &[
    "must be authenticated",               // Alchemy (HTTP 401)
    "invalid project id",                  // Infura (HTTP 401)
    "invalid api key",                     // QuickNode, Ankr, Chainstack
    "api key is invalid",                  // generic
    "invalid apikey",                      // generic
    "unauthorized", // Ankr "Unauthorized: You must authenticate…", generic 401s
    "authentication required", // generic
    "rejected due to project id settings", // Infura's allow-lists
];

/// Words of failures known to pass: rate limits, budgets, overloaded or syncing backends.
pub(super) const TRANSIENT_PHRASES: &[&str] = &[
    "rate limit",
    "rate exceeded",
    "too many requests",
    "request limit",
    "capacity",
    "compute units",
    "throughput",
    "exceeded the quota",
    "daily request count",
    "timeout",
    "timed out",
    "try again",
    "temporarily",
    "overloaded",
    "busy",
    "header not found",
    "unknown block",
    "block not found",
    "not yet available",
    "no backend is currently healthy",
    "service unavailable",
    "bad gateway",
    "internal error",
    "connection reset",
];

/// Words of a method the node lacks.
pub(super) const UNSUPPORTED_PHRASES: &[&str] = &[
    "method not found",
    "does not exist/is not available",
    "method not supported",
    "unsupported method",
    "is not supported",
    "not whitelisted",
    "method not allowed",
];
