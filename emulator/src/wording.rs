//! How real providers word their refusals, so the indexer can be tried against each.
//!
//! Each [`Provider`] says no to a log range that is too wide, to one that holds too many
//! results, and to a client over its rate, in that provider's own words (collected from the
//! providers' answers and documentation, November 2026). Some name the cap, some suggest a range
//! that would work, some say neither.

/// A refusal as the provider sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status of the answer (200 for a JSON-RPC error in a normal answer).
    pub status: u16,
    /// JSON-RPC error code.
    pub code: i64,
    /// The provider's words.
    pub message: String,
}

/// Providers and nodes whose refusals the emulator speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// Alchemy: names the cap and suggests a range, for both limits.
    Alchemy,
    /// Infura: caps results and suggests a range.
    Infura,
    /// QuickNode: names the cap.
    Quicknode,
    /// Ankr: neither cap nor range.
    Ankr,
    /// Chainstack: neither.
    Chainstack,
    /// geth with `--rpc.rangelimit`: names the cap.
    Geth,
    /// reth: names the cap; suggests a range for results.
    Reth,
    /// Besu: neither.
    Besu,
    /// Avalanche's C-Chain nodes: the asked range and the cap.
    Avalanche,
    /// thirdweb: names the cap.
    Thirdweb,
    /// Base's public node: neither.
    Base,
    /// Optimism's public node: neither.
    Optimism,
    /// PublicNode: names the cap.
    Publicnode,
    /// Blast API (paid plans): the asked span and the cap.
    Blast,
    /// Coinbase Developer Platform: names the cap.
    Coinbase,
    /// dRPC's free tier: names the cap.
    Drpc,
    /// Arbitrum's Nitro nodes: results only.
    Arbitrum,
    /// LlamaRPC: names the cap.
    Llamarpc,
    /// Moonbeam and Moonriver: names the cap.
    Moonbeam,
    /// A node that says no more than that the range is too large.
    Plain,
}

impl Provider {
    /// Every provider, for tests that try them all.
    pub const ALL: [Provider; 20] = [
        Provider::Alchemy,
        Provider::Infura,
        Provider::Quicknode,
        Provider::Ankr,
        Provider::Chainstack,
        Provider::Geth,
        Provider::Reth,
        Provider::Besu,
        Provider::Avalanche,
        Provider::Thirdweb,
        Provider::Base,
        Provider::Optimism,
        Provider::Publicnode,
        Provider::Blast,
        Provider::Coinbase,
        Provider::Drpc,
        Provider::Arbitrum,
        Provider::Llamarpc,
        Provider::Moonbeam,
        Provider::Plain,
    ];

    /// The refusal of `eth_getLogs` over `[from, to]` when at most `cap` blocks are allowed.
    pub fn range_refusal(self, from: u64, to: u64, cap: u64) -> Refusal {
        let last = from + cap.max(1) - 1;
        let span = to - from + 1;
        let (code, message) = match self {
            Provider::Alchemy => (
                -32600,
                format!(
                    "You can make eth_getLogs requests with up to a {cap} block range. Based on your parameters, this block range should work: [{from:#x}, {last:#x}]"
                ),
            ),
            Provider::Infura => (
                -32005,
                format!(
                    "query returned more than 10000 results. Try with this block range [{from:#x}, {last:#x}]."
                ),
            ),
            Provider::Quicknode => (-32614, format!("eth_getLogs is limited to a {cap} range")),
            Provider::Ankr => (-32600, "block range is too wide".into()),
            Provider::Chainstack => (-32000, "Block range limit exceeded.".into()),
            Provider::Geth | Provider::Publicnode => {
                (-32000, format!("exceed maximum block range: {cap}"))
            }
            Provider::Reth | Provider::Llamarpc => {
                (-32602, format!("query exceeds max block range {cap}"))
            }
            Provider::Besu => (-32005, "Requested range exceeds maximum range limit".into()),
            Provider::Avalanche => (
                -32000,
                format!("requested too many blocks from {from} to {to}, maximum is set to {cap}"),
            ),
            Provider::Thirdweb => (
                -32602,
                format!("Maximum allowed number of requested blocks is {cap}"),
            ),
            Provider::Base | Provider::Plain => (-32000, "block range too large".into()),
            Provider::Optimism => (-32000, "Block range is too large".into()),
            Provider::Blast => (
                -32000,
                format!(
                    "eth_getLogs range exceeds the range allowed for your plan ({span} > {cap})"
                ),
            ),
            Provider::Coinbase => (
                -32000,
                format!("please limit the query to at most {cap} blocks"),
            ),
            Provider::Drpc => (
                35,
                format!("ranges over {cap} blocks are not supported on freetier"),
            ),
            Provider::Arbitrum => (
                -32000,
                "logs matched by query exceeds limit of 10000".into(),
            ),
            Provider::Moonbeam => (-32603, format!("block range is too wide (maximum {cap})")),
        };
        Refusal {
            status: 200,
            code,
            message,
        }
    }

    /// The refusal of an `eth_getLogs` that matched more than `cap` logs; `fits` is the widest
    /// range from the asked start that would not have.
    pub fn result_refusal(self, cap: usize, fits: (u64, u64)) -> Refusal {
        let (first, last) = fits;
        let (code, message) = match self {
            Provider::Alchemy => (
                -32602,
                format!(
                    "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of {cap} logs in the response. Based on your parameters, this block range should work: [{first:#x}, {last:#x}]"
                ),
            ),
            Provider::Infura => (
                -32005,
                format!(
                    "query returned more than {cap} results. Try with this block range [{first:#x}, {last:#x}]."
                ),
            ),
            Provider::Reth => (
                -32602,
                format!("query exceeds max results {cap}, retry with the range {first}-{last}"),
            ),
            Provider::Ankr | Provider::Llamarpc => {
                (-32600, format!("query exceeds max results {cap}"))
            }
            Provider::Arbitrum => (
                -32000,
                format!("logs matched by query exceeds limit of {cap}"),
            ),
            Provider::Optimism | Provider::Base => (-32000, "backend response too large".into()),
            _ => (-32005, format!("query returned more than {cap} results")),
        };
        Refusal {
            status: 200,
            code,
            message,
        }
    }

    /// The answer to a request without the project's API key, or with a wrong one.
    pub fn key_rejected(self) -> Refusal {
        let (code, message) = match self {
            Provider::Alchemy => (-32600, "Must be authenticated!"),
            Provider::Infura => (-32002, "invalid project id"),
            Provider::Quicknode | Provider::Chainstack => (-32001, "invalid API key"),
            Provider::Ankr => (
                -32000,
                "Unauthorized: You must authenticate your request with an API key.",
            ),
            _ => (-32001, "unauthorized"),
        };
        Refusal {
            status: 401,
            code,
            message: message.to_string(),
        }
    }

    /// The answer to a client over the rate of `per_second` requests.
    pub fn rate_limited(self, per_second: u32) -> Refusal {
        let (code, message) = match self {
            Provider::Alchemy => (
                429,
                "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput".to_string(),
            ),
            Provider::Infura => (-32005, "project ID request rate exceeded".into()),
            Provider::Quicknode => (
                -32007,
                format!("{per_second}/second request limit reached - reduce calls per second or upgrade your account at quicknode.com"),
            ),
            _ => (429, "Too Many Requests".into()),
        };
        Refusal {
            status: 429,
            code,
            message,
        }
    }
}
