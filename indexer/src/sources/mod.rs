//! Decoders: one module per kind of contract, each turning that contract's logs into the one
//! normalised model ([`Decoded`]). Dispatch is on (contract role, topic0): the same topic0 can
//! mean different things on different contracts (ERC-20 and ERC-721 `Transfer` share one).
//!
//! A log that fails to decode is not an error of the indexer: it comes back as [`DecodeError`]
//! and is stored with the reason, and the chain goes on.

mod agent;
mod factory;
mod identity;
pub mod legacy;
mod model;
pub mod payments;
mod registry;
mod reputation;
mod settlement;
mod token;
mod validation;

pub(crate) use agent::card as agent_card_fields;
pub use model::{CardFields, Decoded, FeedbackShape, RegistryAction, ValidationShape};

use alloy::primitives::{Address, B256, Bytes};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

/// What a watched contract is to the indexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Creates agent contracts.
    Factory,
    /// Enrols agent contracts.
    Registry,
    /// ERC-8004 Identity Registry.
    Identity,
    /// ERC-8004 Reputation Registry.
    Reputation,
    /// ERC-8004 Validation Registry.
    Validation,
    /// An agent contract (a factory child or an enrolled agent).
    Agent,
    /// A payment token (ERC-20 with EIP-3009).
    Token,
    /// The x402 batch-settlement contract.
    BatchSettlement,
}

impl Role {
    /// The name stored in `events.source`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Factory => "factory",
            Role::Registry => "registry",
            Role::Identity => "identity",
            Role::Reputation => "reputation",
            Role::Validation => "validation",
            Role::Agent => "agent",
            Role::Token => "token",
            Role::BatchSettlement => "x402_batch",
        }
    }
}

/// Why a log could not be turned into a [`Decoded`] event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A log without topics (anonymous event).
    #[error("log has no topic0")]
    NoTopic,
    /// topic0 is not an event this role emits.
    #[error("unknown event {topic0} for a {role} contract")]
    UnknownEvent {
        /// Role of the emitting contract.
        role: &'static str,
        /// The unknown topic0.
        topic0: B256,
    },
    /// topic0 is known but the topics or data do not fit its signature.
    #[error("malformed {event}: {reason}")]
    Malformed {
        /// The event the topic0 named.
        event: &'static str,
        /// The ABI decoder's complaint.
        reason: String,
    },
}

/// Decodes one log emitted by a contract of `role`.
pub fn decode(role: Role, log: &Log) -> Result<Decoded, DecodeError> {
    let topic0 = *log.topic0().ok_or(DecodeError::NoTopic)?;
    let decoded = match role {
        Role::Factory => factory::decode(topic0, log),
        Role::Registry => registry::decode(topic0, log),
        Role::Agent => agent::decode(topic0, log),
        Role::Identity => identity::decode(topic0, log),
        Role::Reputation => reputation::decode(topic0, log),
        Role::Validation => validation::decode(topic0, log),
        Role::Token => token::decode(topic0, log),
        Role::BatchSettlement => settlement::decode(topic0, log),
    };
    decoded.unwrap_or(Err(DecodeError::UnknownEvent {
        role: role.as_str(),
        topic0,
    }))
}

/// Decodes `log` as event `E`, naming `E` when the shape does not fit.
pub(crate) fn event<E: SolEvent>(log: &Log) -> Result<E, DecodeError> {
    E::decode_log(&log.inner)
        .map(|decoded| decoded.data)
        .map_err(|e| DecodeError::Malformed {
            event: E::SIGNATURE,
            reason: e.to_string(),
        })
}

/// Lower-case 0x hex of an address, the form stored everywhere.
pub fn hex_address(address: &Address) -> String {
    format!("{address:#x}")
}

/// Lower-case 0x hex of 32 bytes.
pub fn hex_b256(value: &B256) -> String {
    format!("{value:#x}")
}

/// A bytes32 tag from legacy events: the UTF-8 text before the zero padding.
pub(crate) fn bytes32_text(value: &B256) -> String {
    let end = value.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    String::from_utf8_lossy(&value[..end]).into_owned()
}

/// The bytes of a log's data, for storing raw events.
pub fn log_data(log: &Log) -> Bytes {
    log.inner.data.data.clone()
}

#[cfg(test)]
mod tests;
