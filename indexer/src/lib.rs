//! agentindex's indexing engine.
//!
//! This crate will own the typed configuration, the RPC layer, the per-chain follower with its
//! reorg window, the decoders for each event source, the documents worker, reputation, and the
//! SQLite store with its single writer (see `DESIGN.md`). It is empty until the chain-follower
//! issue lands; the contracts it decodes and the devnet it is tested on live in
//! `agentindex-contracts`.
