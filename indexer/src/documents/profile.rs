//! An agent's profile from what the chain says of it and the documents linked to it: a pure
//! function, so the rules can be read and tested without a database.
//!
//! Name and description come from the registration file, else the card, else the chain. The card
//! is the off-chain one unless its bytes are not the ones the contract anchored, else the
//! contract's own `agentCard()` JSON, else the card fields of its events. Files fetched over
//! plain http are used, but what they claim never counts as verified. The store reads the
//! inputs and writes the result (`store/documents/profiles.rs`).

use super::card::{CardProjection, Skill};
use super::lint::Report;
use super::payments::{PaymentTerms, is_x402_extension};
use super::registration::RegistrationProjection;
use super::{Projection, read_card};
use serde_json::Value;

/// What the chain says of an agent, as its profile needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainAgent {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// For an ERC-8004 agent: its Identity Registry and token id, as stored (0x hex, decimal).
    pub erc8004: Option<(String, String)>,
    /// Name from the chain (an agent contract's card fields).
    pub name: Option<String>,
    /// Description from the chain.
    pub description: Option<String>,
    /// The agent contract's card JSON as the chain gave it, if any.
    pub card: Option<String>,
    /// The card hash the contract anchored, if any.
    pub card_hash: Option<String>,
    /// Tags the chain declares for the agent itself, outside any skill (a Masumi entry's).
    pub tags: Vec<String>,
}

/// Why a document is linked to an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRole {
    /// The agent's registration file (its ERC-8004 URI).
    Registration,
    /// An Agent Card.
    Card,
    /// The domain's `/.well-known/agent-registration.json`.
    Domain,
    /// The agent contract's own `agentCard()` JSON, read with `eth_call`.
    Onchain,
    /// Any other link.
    Other,
}

impl LinkRole {
    /// The role as `agent_documents.role` stores it.
    pub fn of(role: &str) -> Self {
        match role {
            "registration" => Self::Registration,
            "card" => Self::Card,
            "domain" => Self::Domain,
            "onchain" => Self::Onchain,
            _ => Self::Other,
        }
    }
}

/// One document linked to the agent, in the order links are considered (role, then URI).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkedDocument {
    /// Why it is linked.
    pub role: LinkRole,
    /// Its URI.
    pub uri: String,
    /// `ok`, `invalid`, `failed`…; `None` before it was fetched.
    pub status: Option<String>,
    /// What it turned out to be, if it was read.
    pub projection: Option<Projection>,
    /// keccak256 of its bytes (0x hex), if fetched.
    pub hash: Option<String>,
    /// Its signature status, for a card.
    pub signature: Option<String>,
    /// Where its bytes came from (the URL fetched).
    pub source: Option<String>,
}

/// An agent's profile: what discovery shows and searches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// Display name.
    pub name: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// URI of the card used (or pending).
    pub card_uri: Option<String>,
    /// Its status: `ok`, `hash_mismatch`, `pending`, `none`, …
    pub card_status: String,
    /// Signature status of the card.
    pub signature: Option<String>,
    /// The card's first protocol version.
    pub protocol_version: Option<String>,
    /// Whether the agent accepts x402 payments.
    pub x402: bool,
    /// Default input modes.
    pub input_modes: Vec<String>,
    /// Default output modes.
    pub output_modes: Vec<String>,
    /// x402 payment terms.
    pub payments: Vec<PaymentTerms>,
    /// Skills.
    pub skills: Vec<Skill>,
    /// The agent's own tags (beside its skills'), lower case, each once, in the order declared.
    pub tags: Vec<String>,
    /// For an ERC-8004 agent with a registration file: whether it names the agent back.
    pub registration_verified: Option<bool>,
    /// For an ERC-8004 agent with a registration file: whether its domain's file names it.
    pub domain_verified: Option<bool>,
}

/// The card chosen so far: its URI, status and projection.
struct ChosenCard {
    uri: String,
    status: String,
    projection: Option<CardProjection>,
}

/// The profile of `agent` from its linked `documents`.
pub fn build_profile(agent: &ChainAgent, documents: &[LinkedDocument]) -> Profile {
    let mut registration: Option<&RegistrationProjection> = None;
    let mut domain: Option<&RegistrationProjection> = None;
    let mut contract_card: Option<&CardProjection> = None;
    let mut card: Option<ChosenCard> = None;
    let mut signature: Option<String> = None;
    let (mut registration_insecure, mut domain_insecure) = (false, false);
    for document in documents {
        let insecure = document
            .source
            .as_deref()
            .is_some_and(|source| source.starts_with("http://"));
        let mut projection = document.projection.as_ref();
        let mut status = document.status.clone();
        // A card whose bytes are not the ones the contract anchored is not used.
        if document.role == LinkRole::Card
            && let (Some(anchored), Some(hash)) = (&agent.card_hash, &document.hash)
            && !anchored.eq_ignore_ascii_case(hash)
        {
            status = Some("hash_mismatch".into());
            projection = None;
        }
        if document.role == LinkRole::Onchain {
            contract_card = match projection {
                Some(Projection::Card(card)) => Some(card),
                _ => None,
            };
            continue;
        }
        // What the document was read as, even when its projection was refused above.
        let registration_file = match projection {
            Some(Projection::Registration(file)) => Some(file),
            _ => None,
        };
        let card_projection = match projection {
            Some(Projection::Card(card)) => Some((**card).clone()),
            _ => None,
        };
        match &document.projection {
            Some(Projection::Registration(_)) if document.role == LinkRole::Domain => {
                domain = registration_file;
                domain_insecure = insecure;
            }
            Some(Projection::Registration(_)) if registration.is_none() => {
                registration = registration_file;
                registration_insecure = insecure;
            }
            Some(Projection::Card(_)) if card.as_ref().is_none_or(|c| c.projection.is_none()) => {
                signature = document.signature.clone();
                card = Some(ChosenCard {
                    uri: document.uri.clone(),
                    status: status.unwrap_or_default(),
                    projection: card_projection,
                });
            }
            // A card not read yet holds its place as pending.
            None if document.role == LinkRole::Card && card.is_none() => {
                card = Some(ChosenCard {
                    uri: document.uri.clone(),
                    status: status.unwrap_or_else(|| "pending".into()),
                    projection: None,
                });
            }
            _ => {}
        }
    }
    let onchain: Option<Value> = agent
        .card
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok());
    // The agent contract's own card stands in when no off-chain card could be used: its
    // agentCard() JSON when read, else the card fields of its events.
    let onchain_card = onchain
        .as_ref()
        .and_then(|c| read_card(c, &mut Report::default()));
    let projection = card
        .as_ref()
        .and_then(|c| c.projection.as_ref())
        .or(contract_card)
        .or(onchain_card.as_ref());
    let name = registration
        .and_then(|r| r.name.clone())
        .or_else(|| projection.and_then(|c| c.name.clone()))
        .or_else(|| agent.name.clone());
    let description = registration
        .and_then(|r| r.description.clone())
        .or_else(|| projection.and_then(|c| c.description.clone()))
        .or_else(|| agent.description.clone());
    let onchain_terms = onchain
        .as_ref()
        .and_then(|c| c.get("payment"))
        .and_then(|p| p.get("payTo"))
        .and_then(Value::as_str)
        .is_some_and(|to| to.trim_start_matches("0x").chars().any(|c| c != '0'));
    let payments = projection.map(|c| c.payments.clone()).unwrap_or_default();
    let x402 = !payments.is_empty()
        || registration.and_then(|r| r.x402_support) == Some(true)
        || onchain_terms
        || projection.is_some_and(|c| {
            c.capabilities
                .extensions
                .iter()
                .any(|e| is_x402_extension(&e.uri))
        });
    // An ERC-8004 agent's files should name it back: registry, chain and token id.
    let names_this_agent = |file: &RegistrationProjection| match &agent.erc8004 {
        Some((registry, token)) => file.names_agent(agent.chain_id, registry, token),
        None => false,
    };
    let erc8004 = agent.erc8004.is_some();
    let registration_verified = (erc8004 && registration.is_some())
        .then(|| !registration_insecure && registration.is_some_and(names_this_agent));
    let domain_verified = (erc8004 && registration.is_some())
        .then(|| !domain_insecure && domain.is_some_and(names_this_agent));
    Profile {
        name,
        description,
        card_uri: card.as_ref().map(|c| c.uri.clone()),
        card_status: card
            .as_ref()
            .map_or("none".to_string(), |c| c.status.clone()),
        signature,
        protocol_version: projection.and_then(|c| c.protocol_versions.first().cloned()),
        x402,
        input_modes: projection
            .map(|c| c.default_input_modes.clone())
            .unwrap_or_default(),
        output_modes: projection
            .map(|c| c.default_output_modes.clone())
            .unwrap_or_default(),
        payments,
        skills: projection.map(|c| c.skills.clone()).unwrap_or_default(),
        tags: own_tags(&agent.tags),
        registration_verified,
        domain_verified,
    }
}

/// `declared` trimmed and in lower case, blanks dropped, each tag once in its first place.
fn own_tags(declared: &[String]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for tag in declared {
        let tag = tag.trim().to_lowercase();
        if !tag.is_empty() && !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
