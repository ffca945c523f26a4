//! agentindex's indexing engine.
//!
//! It owns the typed configuration ([`config`]), and will own the RPC layer, the per-chain
//! follower with its reorg window, the decoders for each event source, the documents worker,
//! reputation, and the SQLite store with its single writer (see `DESIGN.md`). The contracts it
//! decodes and the devnet it is tested on live in `agentindex-contracts`.

pub mod config;
pub mod documents;
pub mod engine;
pub mod follower;
pub mod metrics;
pub mod reputation;
pub mod rpc;
pub mod sources;
pub mod store;
