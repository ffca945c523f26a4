//! Which payments count towards an agent's reputation, and why the others do not. A payment
//! counts when it went to an address bound to the agent at that block (the store only credits
//! those); it is then excluded when it comes from the agent's own side (the payee address, its
//! owner, an operator, its wallet), from an x402 intermediary (a facilitator's own transfer, or
//! the batch-settlement contract paying out claims already counted as their payers' payments),
//! when it is dust, or when its token is not a configured one.

use alloy::primitives::{Address, B256, U256};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A credited payment as reputation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    /// Who paid.
    pub payer: Address,
    /// The address paid (bound to the agent at the time).
    pub payee: Address,
    /// Token contract.
    pub token: Address,
    /// Amount in the token's smallest unit.
    pub amount: U256,
    /// Block it was made in.
    pub block: u64,
    /// Its log's index in the block.
    pub log_index: u64,
    /// The transaction that made it (a feedback file's proof of payment names it).
    pub tx_hash: B256,
    /// That block's timestamp (seconds).
    pub timestamp: u64,
    /// Whether x402 settled it (EIP-3009, a Permit2 proxy, or a batch-settlement claim).
    pub x402: bool,
}

/// Why a payment does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    /// The payee paid itself.
    SelfPayment,
    /// The agent's owner paid.
    Owner,
    /// One of the agent's operators paid.
    Operator,
    /// The agent's wallet paid.
    Wallet,
    /// Less than the dust threshold of its token.
    Dust,
    /// Not a configured payment token.
    UnknownToken,
    /// A configured x402 facilitator's own transfer, not a customer paying.
    Facilitator,
    /// The x402 batch-settlement contract paying out claims; each claim counted as its channel's
    /// payer paying.
    SettlementPayout,
}

impl Exclusion {
    /// The reason as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::SelfPayment => "self_payment",
            Exclusion::Owner => "owner",
            Exclusion::Operator => "operator",
            Exclusion::Wallet => "wallet",
            Exclusion::Dust => "dust",
            Exclusion::UnknownToken => "unknown_token",
            Exclusion::Facilitator => "facilitator",
            Exclusion::SettlementPayout => "settlement_payout",
        }
    }
}

/// A configured payment token: decimals and the smallest amount that counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRule {
    /// Decimals of the token.
    pub decimals: u8,
    /// Amounts below this (in the smallest unit) are dust.
    pub dust: U256,
}

/// Who stands on the agent's side: payments from them are not evidence of demand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSide {
    /// The current owner.
    pub owner: Option<Address>,
    /// Current operators.
    pub operators: Vec<Address>,
    /// The agent's wallet (ERC-8004 agentWallet), if any.
    pub wallet: Option<Address>,
}

/// Who moves x402 payments without being a customer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Intermediaries {
    /// Configured facilitators.
    pub facilitators: BTreeSet<Address>,
    /// Batch-settlement contracts.
    pub settlement: BTreeSet<Address>,
}

/// Why `payment` does not count, or `None` when it does.
pub fn exclusion(
    payment: &Payment,
    side: &AgentSide,
    tokens: &BTreeMap<Address, TokenRule>,
    intermediaries: &Intermediaries,
) -> Option<Exclusion> {
    let payer = payment.payer;
    if intermediaries.settlement.contains(&payer) {
        return Some(Exclusion::SettlementPayout);
    }
    if intermediaries.facilitators.contains(&payer) {
        return Some(Exclusion::Facilitator);
    }
    if payer == payment.payee {
        return Some(Exclusion::SelfPayment);
    }
    if side.owner == Some(payer) {
        return Some(Exclusion::Owner);
    }
    if side.operators.contains(&payer) {
        return Some(Exclusion::Operator);
    }
    if side.wallet == Some(payer) {
        return Some(Exclusion::Wallet);
    }
    let Some(rule) = tokens.get(&payment.token) else {
        return Some(Exclusion::UnknownToken);
    };
    (payment.amount < rule.dust).then_some(Exclusion::Dust)
}

/// `amount` in whole tokens, as a float (for features and scores, never for accounting).
pub fn normalised(amount: U256, decimals: u8) -> f64 {
    let text = amount.to_string();
    let value: f64 = text.parse().unwrap_or(f64::MAX);
    value / 10f64.powi(i32::from(decimals))
}
