//! Reading Cardano for Masumi's agent registry: `source.rs` is the interface a provider
//! implements (and what a second backend would take), `blockfrost.rs` the Blockfrost one, and
//! `registry.rs` what a registry transaction did. The loop that follows a network into the
//! store is `follower::cardano`; the networks' numbers and CAIP-2 ids are
//! `primitives::CardanoNetwork`.

pub mod blockfrost;
pub mod escrow;
pub mod plutus_data;
pub mod registry;
pub mod source;

pub use blockfrost::Blockfrost;
