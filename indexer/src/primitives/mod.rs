//! The bottom layer: small value types every other module shares and that import nothing of
//! the project: an agent's key, a block's place on the chain, the Cardano networks' numbers,
//! and the one way an integer crosses into the database.
//!
//! Everything above may use these; these use only the standard library and alloy's primitives.
//! `docs/architecture.md` shows the layers and what each may import.

mod agent_key;
mod block;
mod cardano_network;
mod sql_int;

pub use agent_key::{AgentKey, AgentKeyError, AssetStem, POLICY_BYTES};
pub use block::BlockRef;
pub use cardano_network::{
    CARDANO_CHAIN_ID_BASE, CardanoNetwork, MasumiEscrows, MasumiPolicies, caip2_of_chain,
    cardano_party, cardano_payment_credential, cardano_token, masumi_stablecoins,
};
pub use sql_int::{IntOutOfRange, sql_bits, sql_bound, sql_int, sql_uint};
