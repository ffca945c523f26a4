//! The payment score: 0 to 100 from who paid an agent, how often and how recently, as of one
//! time. The formula and its reasons are in `docs/reputation.md`; in short, each payer adds
//! `w · ln(1 + n)` where `n` is that payer's age-decayed payment count and `w` is 1, or less for a
//! payer the agent recently sent funds to (circular flow), and the sum maps onto 0..100 with
//! `100 · (1 − e^(−sum / scale))`. When the trust rank has spoken, each payer's part is split by
//! its standing `σ` (0 to 1): `σ` of it counts in full, and the rest, from all payers without
//! standing together, counts up to a cap, so a crowd of fresh wallets cannot buy the score.

use super::features::decay;
use super::funding::PayerCluster;
use super::payments::Payment;
use crate::config::ReputationConfig;
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of the payment score (`[reputation]` in the config).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreParams {
    /// A payment's weight halves every this many seconds.
    pub half_life_secs: f64,
    /// The sum at which the score reaches 63 (1 − 1/e of 100).
    pub scale: f64,
    /// Weight of a payer the agent sent funds to within the window.
    pub circular_discount: f64,
    /// How far back an outgoing transfer makes a payer circular, in seconds.
    pub circular_window_secs: u64,
}

impl Default for ScoreParams {
    fn default() -> Self {
        Self::from(&ReputationConfig::default())
    }
}

impl From<&ReputationConfig> for ScoreParams {
    fn from(config: &ReputationConfig) -> Self {
        const DAY: f64 = 86_400.0;
        Self {
            half_life_secs: config.half_life_days * DAY,
            scale: config.scale,
            circular_discount: config.circular_discount,
            circular_window_secs: (config.circular_window_days * DAY) as u64,
        }
    }
}

/// Funds the agent's side sent out: a payer that received them recently counts less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outflow {
    /// Recipient.
    pub to: Address,
    /// When (block timestamp).
    pub timestamp: u64,
}

/// One payer's part in a score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayerPart {
    /// The payer.
    pub payer: Address,
    /// Payments counted.
    pub payments: u64,
    /// Their age-decayed count.
    pub decayed: f64,
    /// 1, or the circular discount.
    pub weight: f64,
    /// Its standing in the trust rank (1 when the rank has not spoken).
    #[serde(default = "full_standing")]
    pub standing: f64,
    /// `weight · ln(1 + decayed)`.
    pub contribution: f64,
    /// The funding cluster this part stands for, when `payer` is a cluster's representative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<PayerCluster>,
}

/// The standing of a payer when the trust rank has not spoken.
fn full_standing() -> f64 {
    1.0
}

/// Payers' standing from the trust rank, and the cap on what payers without it add together.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'a> {
    /// Standing (0 to 1) by payer; a payer not listed has none.
    pub of: &'a BTreeMap<Address, f64>,
    /// The most the unproven parts add to the sum together.
    pub cap: f64,
}

/// A payment score with how it came about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaymentScore {
    /// 0 to 100.
    pub score: f64,
    /// The sum before mapping onto 0..100.
    pub sum: f64,
    /// What payers without standing would have added, before the cap.
    #[serde(default)]
    pub unproven: f64,
    /// Each payer's part, by address.
    pub payers: Vec<PayerPart>,
}

/// The payment score of an agent as of `as_of` from its counted `payments` and its `outflows`,
/// with its payers' `standing` when the trust rank has spoken; anything after `as_of` is ignored.
pub fn payment_score(
    payments: &[Payment],
    outflows: &[Outflow],
    as_of: u64,
    params: &ScoreParams,
    standing: Option<Standing<'_>>,
) -> PaymentScore {
    let mut per_payer: BTreeMap<Address, (u64, f64)> = BTreeMap::new();
    for payment in payments.iter().filter(|p| p.timestamp <= as_of) {
        let entry = per_payer.entry(payment.payer).or_default();
        entry.0 += 1;
        entry.1 += decay(as_of - payment.timestamp, params.half_life_secs);
    }
    let circular = |payer: &Address| {
        outflows.iter().any(|o| {
            o.to == *payer
                && o.timestamp <= as_of
                && as_of - o.timestamp <= params.circular_window_secs
        })
    };
    let payers: Vec<PayerPart> = per_payer
        .into_iter()
        .map(|(payer, (payments, decayed))| {
            let weight = if circular(&payer) {
                params.circular_discount
            } else {
                1.0
            };
            PayerPart {
                payer,
                payments,
                decayed,
                weight,
                standing: standing.map_or(1.0, |s| {
                    s.of.get(&payer).copied().unwrap_or(0.0).clamp(0.0, 1.0)
                }),
                contribution: weight * decayed.ln_1p(),
                cluster: None,
            }
        })
        .collect();
    let proven: f64 = payers.iter().map(|p| p.standing * p.contribution).sum();
    let unproven: f64 = payers
        .iter()
        .map(|p| (1.0 - p.standing) * p.contribution)
        .sum();
    let cap = standing.map_or(f64::INFINITY, |s| s.cap);
    let sum = proven + unproven.min(cap);
    let score = if params.scale > 0.0 {
        100.0 * (1.0 - (-sum / params.scale).exp())
    } else {
        0.0
    };
    PaymentScore {
        score,
        sum,
        unproven,
        payers,
    }
}
