//! agentindex's indexing engine: the typed configuration ([`config`]), the RPC layer ([`rpc`]),
//! the per-chain follower with its reorg window ([`follower`]), the decoders for each event
//! source ([`sources`]), documents ([`documents`]), reputation ([`reputation`]), agents' state
//! from their facts ([`agents`]), the SQLite store with its single writer ([`store`]) and the
//! engine that runs them with the documents worker ([`engine`]), what the running followers meet
//! at their endpoints ([`health`]), over the shared value types of
//! [`primitives`] and the tables declared once in [`schema`]. URLs that may carry secrets are
//! shown through [`redact`]; evaluations and feed lines are written in RFC 8785 canonical form
//! by [`canonical_json`].
//!
//! `docs/architecture.md` draws the data path, the invariants and where each is kept, and the
//! layers these modules form. The contracts it decodes and the devnet it is tested on live in
//! `agentindex-contracts`.

pub mod agents;
pub mod canonical_json;
pub mod cardano;
pub mod config;
pub mod documents;
pub mod engine;
pub mod feed;
pub mod follower;
pub mod health;
pub mod liveness;
pub mod metrics;
pub mod primitives;
pub mod priority;
pub mod redact;
pub mod reputation;
pub mod rpc;
pub mod schema;
pub mod sources;
pub mod store;
