//! The bottom layer: small value types every other module shares and that import nothing of
//! the project: an agent's key, a block's place on the chain, and the one way an integer
//! crosses into the database.
//!
//! Everything above may use these; these use only the standard library and alloy's primitives.
//! `docs/architecture.md` shows the layers and what each may import.

mod agent_key;
mod block;
mod sql_int;

pub use agent_key::{AgentKey, AgentKeyError};
pub use block::BlockRef;
pub use sql_int::{IntOutOfRange, sql_bits, sql_bound, sql_int, sql_uint};
