//! `[reputation]`: the parameters of the payment score, the evidence weighting of feedback, the
//! trust rank over the payment graph and the composite (see `docs/reputation.md`). Plain data:
//! `reputation` turns it into its own types.

use super::{ConfigError, ConfigResult};
use alloy::primitives::Address;
use serde::Deserialize;

/// The most feeds `[reputation] feeds_kept` may keep per chain.
pub(super) const MAX_FEEDS_KEPT: u32 = 1_000;

/// `[reputation]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReputationConfig {
    /// A payment's weight halves every this many days of block time.
    pub half_life_days: f64,
    /// The score scale: the sum of payer contributions at which the score reaches 63.
    pub scale: f64,
    /// Weight of a payer the agent sent funds to within the circular window (0 to 1).
    pub circular_discount: f64,
    /// How many days back an outgoing transfer makes a payer circular.
    pub circular_window_days: f64,
    /// How much each component weighs in the composite score.
    pub weights: WeightsConfig,
    /// How much each feedback weighs by the evidence behind it.
    pub feedback: FeedbackEvidenceConfig,
    /// The trust rank over the payment graph.
    pub trust: TrustConfig,
    /// Reputation feeds stored per chain, at the newest final epoch boundaries (0: none; past
    /// blocks' feeds are then not served). Not a scoring rule: changing it rescores nothing.
    pub feeds_kept: u32,
}

/// `[reputation.feedback]`: how much one client's feedback weighs, by the evidence behind it.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeedbackEvidenceConfig {
    /// Weight of a client with a counted payment to the agent before its feedback.
    pub paid_weight: f64,
    /// Weight of a client that never paid the agent before its feedback.
    pub unpaid_weight: f64,
    /// Weight of an unpaid client that first gave feedback in a burst.
    pub burst_weight: f64,
    /// The most all unpaid clients of one agent weigh together.
    pub unpaid_cap: f64,
    /// A burst: at least `burst_clients` unpaid clients first giving feedback within this many
    /// hours of each other.
    pub burst_window_hours: f64,
    /// How many first-time unpaid clients make a burst.
    pub burst_clients: u64,
    /// The value (0–100) the feedback component leans to when there is little evidence.
    pub prior: f64,
    /// How many paid clients' worth of evidence the prior counts as.
    pub prior_weight: f64,
}

/// `[reputation.trust]`: the seeded trust rank over the payment graph.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrustConfig {
    /// The share of trust that follows payments at each step (the rest returns to the seeds).
    pub damping: f64,
    /// The rank is computed as of every block that is a multiple of this.
    pub interval_blocks: u64,
    /// Blocks over which a new epoch's rank goes into force, a group of agents at a time, so no
    /// batch rescores every paid agent (0: all at the epoch; at most `interval_blocks - 1`
    /// are used).
    pub rollout_blocks: u64,
    /// Addresses trusted from the start (payers or agents' payment addresses).
    pub seeds: Vec<Address>,
    /// The seed weight of each configured seed, in units of one payer's breadth.
    pub seed_weight: f64,
    /// The most payers without standing add to an agent's payment sum together.
    pub unproven_cap: f64,
    /// The trust (in multiples of the average agent's) at which the component reaches 63.
    pub scale: f64,
    /// The most blocks between a funding transfer and the funded account moving the money on
    /// for the two accounts to count as one payer (a chain's `funding_lookback_blocks` bounds
    /// what is seen).
    pub funding_window_blocks: u64,
    /// Accounts funded within one window that make their funder a hub (an exchange, a bridge,
    /// a faucet), whose customers are not joined into one payer.
    pub funding_hub_fanout: usize,
}

/// `[reputation.weights]`: how much each component weighs in the composite score.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WeightsConfig {
    /// Payment score.
    pub payments: f64,
    /// Trust rank.
    pub trust: f64,
    /// Average unrevoked feedback.
    pub feedback: f64,
    /// Average latest validation response.
    pub validations: f64,
    /// Average latest agent-contract rating.
    pub ratings: f64,
    /// This instance's own observation of the agent's endpoints (uptime over 7 days, with
    /// `[liveness]` on): 0 by default, so reputation stays a function of the chain; an operator
    /// who wants it in the composite sets a weight and accepts that their feed is theirs alone.
    pub availability: f64,
}

/// The defaults `docs/reputation.md` justifies; the reputation module's own defaults are these.
impl Default for ReputationConfig {
    fn default() -> Self {
        Self {
            half_life_days: 30.0,
            scale: 8.0,
            circular_discount: 0.25,
            circular_window_days: 30.0,
            weights: WeightsConfig::default(),
            feedback: FeedbackEvidenceConfig::default(),
            trust: TrustConfig::default(),
            feeds_kept: 3,
        }
    }
}

impl Default for FeedbackEvidenceConfig {
    fn default() -> Self {
        Self {
            paid_weight: 1.0,
            unpaid_weight: 0.25,
            burst_weight: 0.05,
            unpaid_cap: 0.5,
            burst_window_hours: 24.0,
            burst_clients: 5,
            prior: 0.0,
            prior_weight: 1.0,
        }
    }
}

impl Default for TrustConfig {
    fn default() -> Self {
        Self {
            damping: 0.85,
            interval_blocks: 1_000,
            rollout_blocks: 320,
            seeds: Vec::new(),
            seed_weight: 10.0,
            unproven_cap: 2.0,
            scale: 2.0,
            funding_window_blocks: 1_000,
            funding_hub_fanout: 50,
        }
    }
}

impl Default for WeightsConfig {
    fn default() -> Self {
        Self {
            payments: 0.3,
            trust: 0.3,
            feedback: 0.2,
            validations: 0.1,
            ratings: 0.1,
            availability: 0.0,
        }
    }
}

impl ReputationConfig {
    pub(super) fn validate(&self) -> ConfigResult<()> {
        let bad = |field: &str, message: &str| ConfigError::Key {
            key: format!("reputation.{field}"),
            message: message.to_string(),
        };
        if !positive(self.half_life_days) {
            return Err(bad("half_life_days", "must be more than 0"));
        }
        if !positive(self.scale) {
            return Err(bad("scale", "must be more than 0"));
        }
        if !(0.0..=1.0).contains(&self.circular_discount) {
            return Err(bad("circular_discount", "must be between 0 and 1"));
        }
        if !(self.circular_window_days.is_finite() && self.circular_window_days >= 0.0) {
            return Err(bad("circular_window_days", "must not be negative"));
        }
        let w = &self.weights;
        for (name, weight) in [
            ("payments", w.payments),
            ("trust", w.trust),
            ("feedback", w.feedback),
            ("validations", w.validations),
            ("ratings", w.ratings),
            ("availability", w.availability),
        ] {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(bad(
                    &format!("weights.{name}"),
                    "must be a number, 0 or more",
                ));
            }
        }
        if w.payments + w.trust + w.feedback + w.validations + w.ratings + w.availability <= 0.0 {
            return Err(bad("weights", "at least one weight must be more than 0"));
        }
        let f = &self.feedback;
        for (name, weight) in [
            ("paid_weight", f.paid_weight),
            ("unpaid_weight", f.unpaid_weight),
            ("burst_weight", f.burst_weight),
            ("unpaid_cap", f.unpaid_cap),
            ("burst_window_hours", f.burst_window_hours),
            ("prior_weight", f.prior_weight),
        ] {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(bad(
                    &format!("feedback.{name}"),
                    "must be a number, 0 or more",
                ));
            }
        }
        if !(0.0..=100.0).contains(&f.prior) {
            return Err(bad("feedback.prior", "must be between 0 and 100"));
        }
        let t = &self.trust;
        if !(t.damping.is_finite() && (0.0..1.0).contains(&t.damping)) {
            return Err(bad("trust.damping", "must be at least 0 and less than 1"));
        }
        if t.interval_blocks == 0 {
            return Err(bad("trust.interval_blocks", "must be more than 0"));
        }
        if !(t.seed_weight.is_finite() && t.seed_weight >= 0.0) {
            return Err(bad("trust.seed_weight", "must be a number, 0 or more"));
        }
        if !(t.unproven_cap.is_finite() && t.unproven_cap >= 0.0) {
            return Err(bad("trust.unproven_cap", "must be a number, 0 or more"));
        }
        if !positive(t.scale) {
            return Err(bad("trust.scale", "must be more than 0"));
        }
        if t.funding_window_blocks == 0 {
            return Err(bad("trust.funding_window_blocks", "must be more than 0"));
        }
        if t.funding_hub_fanout < 2 {
            return Err(bad("trust.funding_hub_fanout", "must be at least 2"));
        }
        if self.feeds_kept > MAX_FEEDS_KEPT {
            return Err(bad(
                "feeds_kept",
                &format!("must be at most {MAX_FEEDS_KEPT} (each feed is about 2.5 KB per agent)"),
            ));
        }
        Ok(())
    }
}

/// A finite number above zero (NaN and infinities are not).
fn positive(value: f64) -> bool {
    value.is_finite() && value > 0.0
}
