//! Payment features of one agent as of a point in time: counts, payers, repeat payers, volume per
//! token, first and last payment, recency-weighted frequency and payer concentration. Pure
//! functions of the counted payments and the as-of time (a block's timestamp, never the clock).

use super::payments::{Payment, TokenRule, normalised};
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Seconds in a day, for "paid on different days".
const DAY: u64 = 86_400;

/// What an agent's counted payments say, as of one time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaymentFeatures {
    /// Payments counted.
    pub payment_count: u64,
    /// Of which x402 settlements (EIP-3009, Permit2 proxies, batch settlement).
    pub x402_count: u64,
    /// Distinct payers.
    pub unique_payers: u64,
    /// Payers who paid on at least two different (UTC) days.
    pub repeat_payers: u64,
    /// Volume per token, in whole tokens.
    pub volume: BTreeMap<Address, f64>,
    /// Timestamp of the first payment.
    pub first_payment: Option<u64>,
    /// Timestamp of the last payment.
    pub last_payment: Option<u64>,
    /// Payments weighted by age: each counts 2^(-age / half-life).
    pub recency_weighted: f64,
    /// Share of all payments made by the payer who paid most often (0 when none).
    pub top_payer_share: f64,
}

/// The features of `payments` (already filtered to those that count) as of `as_of`; payments
/// after `as_of` are ignored.
pub fn features(
    payments: &[Payment],
    tokens: &BTreeMap<Address, TokenRule>,
    as_of: u64,
    half_life_secs: f64,
) -> PaymentFeatures {
    let mut out = PaymentFeatures::default();
    let mut days: BTreeMap<Address, BTreeSet<u64>> = BTreeMap::new();
    let mut per_payer: BTreeMap<Address, u64> = BTreeMap::new();
    for payment in payments.iter().filter(|p| p.timestamp <= as_of) {
        out.payment_count += 1;
        out.x402_count += u64::from(payment.x402);
        days.entry(payment.payer)
            .or_default()
            .insert(payment.timestamp / DAY);
        *per_payer.entry(payment.payer).or_default() += 1;
        if let Some(rule) = tokens.get(&payment.token) {
            *out.volume.entry(payment.token).or_default() +=
                normalised(payment.amount, rule.decimals);
        }
        out.first_payment = Some(
            out.first_payment
                .map_or(payment.timestamp, |f| f.min(payment.timestamp)),
        );
        out.last_payment = Some(
            out.last_payment
                .map_or(payment.timestamp, |l| l.max(payment.timestamp)),
        );
        out.recency_weighted += decay(as_of - payment.timestamp, half_life_secs);
    }
    out.unique_payers = per_payer.len() as u64;
    out.repeat_payers = days.values().filter(|d| d.len() >= 2).count() as u64;
    if out.payment_count > 0 {
        let top = per_payer.values().max().copied().unwrap_or(0);
        out.top_payer_share = top as f64 / out.payment_count as f64;
    }
    out
}

/// The weight of something `age` seconds old under a half-life.
pub fn decay(age: u64, half_life_secs: f64) -> f64 {
    if half_life_secs <= 0.0 {
        return 1.0;
    }
    (-(age as f64) / half_life_secs * std::f64::consts::LN_2).exp()
}
