//! Feedback weighted by the evidence behind it. ERC-8004 lets any address give any agent
//! feedback, so an average of every feedback is moved by whoever makes the most wallets. Here a
//! feedback from a client that paid the agent (a counted payment before the feedback, from the
//! client's address or cited by its feedback file's proof of payment) weighs most; one from a
//! client that never paid weighs less; one from a client that first appeared in
//! a burst of unpaid first-time clients weighs least; and all unpaid feedback of an agent
//! together weighs at most a cap. A client's weight is shared among its feedback, so one client
//! saying the same thing fifty times says it once. The component leans to a prior when the
//! evidence is thin. Pure: a function of the agent's feedback and counted payments.

use super::payments::Payment;
use super::summary::{FeedbackEntry, MAX_DECIMALS};
use crate::config::FeedbackEvidenceConfig;
use alloy::primitives::{Address, B256};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many feedback the explanation names as having moved the component most.
const TOP: usize = 5;

/// Parameters of the feedback component (`[reputation.feedback]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackParams {
    /// Weight of a paying client.
    pub paid_weight: f64,
    /// Weight of a client that never paid before its feedback.
    pub unpaid_weight: f64,
    /// Weight of an unpaid client first seen in a burst.
    pub burst_weight: f64,
    /// The most all unpaid clients weigh together.
    pub unpaid_cap: f64,
    /// Width of a burst window, in seconds.
    pub burst_window_secs: u64,
    /// First-time unpaid clients in one window that make it a burst.
    pub burst_clients: u64,
    /// The value the component leans to without evidence (0–100).
    pub prior: f64,
    /// The weight of the prior.
    pub prior_weight: f64,
}

impl Default for FeedbackParams {
    fn default() -> Self {
        Self::from(&FeedbackEvidenceConfig::default())
    }
}

impl From<&FeedbackEvidenceConfig> for FeedbackParams {
    fn from(config: &FeedbackEvidenceConfig) -> Self {
        Self {
            paid_weight: config.paid_weight,
            unpaid_weight: config.unpaid_weight,
            burst_weight: config.burst_weight,
            unpaid_cap: config.unpaid_cap,
            burst_window_secs: (config.burst_window_hours * 3_600.0) as u64,
            burst_clients: config.burst_clients,
            prior: config.prior,
            prior_weight: config.prior_weight,
        }
    }
}

/// What stands behind one feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The client paid the agent (a counted payment) before giving it.
    Paid,
    /// The client's feedback file cites a counted payment to the agent, made before the
    /// feedback from another address, that no other client cited first.
    Proven,
    /// The client had not paid the agent.
    Unpaid,
    /// The client had not paid, and first gave the agent feedback in a burst of such clients.
    Burst,
}

impl Evidence {
    /// Whether a payment stands behind it (the client's own, or one its file proved).
    pub fn is_paid(self) -> bool {
        matches!(self, Evidence::Paid | Evidence::Proven)
    }

    /// The reason as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Paid => "paid",
            Evidence::Proven => "proven",
            Evidence::Unpaid => "unpaid",
            Evidence::Burst => "burst",
        }
    }
}

/// One feedback's weight and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightedFeedback {
    /// Who gave it.
    pub client: Address,
    /// Where it was given: (block, log index).
    pub position: (u64, u64),
    /// Its value on 0–100 (clamped).
    pub value: f64,
    /// What stands behind it.
    pub evidence: Evidence,
    /// For `proven`: the transaction of the payment its file cited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<B256>,
    /// Its weight in the component, after sharing and the unpaid cap.
    pub weight: f64,
    /// How far it moved the component from the prior: `weight · (value − prior) / total weight`.
    pub pull: f64,
}

/// The feedback component with every feedback's part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedbackScore {
    /// 0–100, or absent without feedback.
    pub score: Option<f64>,
    /// Total weight of the feedback (the prior not included).
    pub evidence_weight: f64,
    /// Clients by what stands behind their feedback.
    pub clients: BTreeMap<Evidence, u64>,
    /// The factor the unpaid feedback was scaled by to stay under the cap (1 when under it).
    pub unpaid_scale: f64,
    /// Every counted feedback, in chain order.
    pub feedback: Vec<WeightedFeedback>,
    /// The feedback that moved the component most, strongest first.
    pub top: Vec<WeightedFeedback>,
}

/// The feedback component from `feedback` (all of one agent) and the agent's counted
/// `payments`, as of the newest of them.
pub fn feedback_score(
    feedback: &[FeedbackEntry],
    payments: &[Payment],
    params: &FeedbackParams,
) -> FeedbackScore {
    let mut first_paid: BTreeMap<Address, (u64, u64)> = BTreeMap::new();
    for payment in payments {
        let at = (payment.block, payment.log_index);
        first_paid
            .entry(payment.payer)
            .and_modify(|p| *p = (*p).min(at))
            .or_insert(at);
    }
    let counted: Vec<&FeedbackEntry> = feedback
        .iter()
        .filter(|f| !f.revoked && f.decimals <= MAX_DECIMALS)
        .collect();
    if counted.is_empty() {
        return FeedbackScore {
            unpaid_scale: 1.0,
            ..FeedbackScore::default()
        };
    }
    let paid = |f: &FeedbackEntry| first_paid.get(&f.client).is_some_and(|p| *p < f.position);
    let proofs = proven(&counted, payments, paid);
    let bursty = burst_clients(
        counted
            .iter()
            .copied()
            .filter(|f| !paid(f) && !proofs.contains_key(&f.position)),
        params.burst_window_secs,
        params.burst_clients,
    );
    let mut per_client: BTreeMap<Address, u64> = BTreeMap::new();
    for f in &counted {
        *per_client.entry(f.client).or_default() += 1;
    }
    let mut weighted: Vec<WeightedFeedback> = counted
        .iter()
        .map(|f| {
            let proof = proofs.get(&f.position).copied();
            let evidence = if paid(f) {
                Evidence::Paid
            } else if proof.is_some() {
                Evidence::Proven
            } else if bursty.contains_key(&f.client) {
                Evidence::Burst
            } else {
                Evidence::Unpaid
            };
            let base = match evidence {
                Evidence::Paid | Evidence::Proven => params.paid_weight,
                Evidence::Unpaid => params.unpaid_weight,
                Evidence::Burst => params.burst_weight,
            };
            WeightedFeedback {
                client: f.client,
                position: f.position,
                value: on_scale(f),
                evidence,
                proof,
                weight: base / per_client[&f.client] as f64,
                pull: 0.0,
            }
        })
        .collect();
    let unpaid: f64 = weighted
        .iter()
        .filter(|w| !w.evidence.is_paid())
        .map(|w| w.weight)
        .sum();
    let unpaid_scale = if unpaid > params.unpaid_cap && unpaid > 0.0 {
        params.unpaid_cap / unpaid
    } else {
        1.0
    };
    for w in weighted.iter_mut().filter(|w| !w.evidence.is_paid()) {
        w.weight *= unpaid_scale;
    }
    let evidence_weight: f64 = weighted.iter().map(|w| w.weight).sum();
    let total = evidence_weight + params.prior_weight;
    let score = (total > 0.0).then(|| {
        (weighted.iter().map(|w| w.weight * w.value).sum::<f64>()
            + params.prior * params.prior_weight)
            / total
    });
    for w in &mut weighted {
        w.pull = if total > 0.0 {
            w.weight * (w.value - params.prior) / total
        } else {
            0.0
        };
    }
    let mut clients: BTreeMap<Evidence, u64> = BTreeMap::new();
    let mut best: BTreeMap<Address, Evidence> = BTreeMap::new();
    for w in &weighted {
        best.entry(w.client)
            .and_modify(|e| *e = (*e).min(w.evidence))
            .or_insert(w.evidence);
    }
    for evidence in best.values() {
        *clients.entry(*evidence).or_default() += 1;
    }
    let mut top = weighted.clone();
    top.sort_by(|a, b| {
        b.pull
            .abs()
            .total_cmp(&a.pull.abs())
            .then(a.position.cmp(&b.position))
    });
    top.truncate(TOP);
    FeedbackScore {
        score,
        evidence_weight,
        clients,
        unpaid_scale,
        feedback: weighted,
        top,
    }
}

/// The feedback (by position) whose file's proof of payment holds, with the proving payment's
/// transaction. A proof holds when a counted payment to the agent in the cited transaction,
/// from the cited payer and to the cited address where the file names them, was made before the
/// feedback, and no other client's feedback claimed that payment first (in chain order): one
/// real payment cannot vouch for a crowd of wallets that copy its hash. Clients that paid from
/// their own address need no proof and claim nothing.
fn proven(
    counted: &[&FeedbackEntry],
    payments: &[Payment],
    paid: impl Fn(&FeedbackEntry) -> bool,
) -> BTreeMap<(u64, u64), B256> {
    let mut in_tx: BTreeMap<B256, Vec<&Payment>> = BTreeMap::new();
    for payment in payments {
        in_tx.entry(payment.tx_hash).or_default().push(payment);
    }
    let mut in_order: Vec<&FeedbackEntry> = counted.to_vec();
    in_order.sort_by_key(|f| f.position);
    let mut claimed: BTreeMap<(u64, u64), Address> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for f in in_order {
        let Some(cited) = f.proof.as_ref().filter(|_| !paid(f)) else {
            continue;
        };
        let candidates = in_tx.get(&cited.tx_hash).map_or(&[][..], Vec::as_slice);
        let found = candidates.iter().find(|p| {
            let at = (p.block, p.log_index);
            at < f.position
                && cited.from.is_none_or(|from| from == p.payer)
                && cited.to.is_none_or(|to| to == p.payee)
                && claimed.get(&at).is_none_or(|client| *client == f.client)
        });
        if let Some(payment) = found {
            claimed.insert((payment.block, payment.log_index), f.client);
            out.insert(f.position, payment.tx_hash);
        }
    }
    out
}

/// A feedback's value read on 0–100, clamped.
fn on_scale(entry: &FeedbackEntry) -> f64 {
    let value = entry.value as f64 / 10f64.powi(i32::from(entry.decimals));
    if value.is_finite() {
        value.clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// The unpaid clients whose first feedback fell in a burst: a window of `window` seconds in
/// which at least `min_clients` unpaid clients gave their first feedback, with that time.
fn burst_clients<'a>(
    unpaid: impl Iterator<Item = &'a FeedbackEntry>,
    window: u64,
    min_clients: u64,
) -> BTreeMap<Address, u64> {
    let mut first: BTreeMap<Address, (u64, (u64, u64))> = BTreeMap::new();
    for f in unpaid {
        first
            .entry(f.client)
            .and_modify(|t| *t = (*t).min((f.timestamp, f.position)))
            .or_insert((f.timestamp, f.position));
    }
    let mut times: Vec<(u64, (u64, u64), Address)> =
        first.iter().map(|(c, (t, p))| (*t, *p, *c)).collect();
    times.sort();
    let mut out = BTreeMap::new();
    if min_clients == 0 {
        return out;
    }
    let mut start = 0;
    for end in 0..times.len() {
        while times[end].0 - times[start].0 > window {
            start += 1;
        }
        if (end - start + 1) as u64 >= min_clients {
            for (t, _, client) in &times[start..=end] {
                out.insert(*client, *t);
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
