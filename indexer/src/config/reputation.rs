//! `[reputation]`: the parameters of the payment score and the composite (see
//! `docs/reputation.md`). Plain data: `reputation` turns it into its own types.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;

/// `[reputation]`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
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
}

/// `[reputation.weights]`: how much each component weighs in the composite score.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WeightsConfig {
    /// Payment score.
    pub payments: f64,
    /// Average unrevoked feedback.
    pub feedback: f64,
    /// Average latest validation response.
    pub validations: f64,
    /// Average latest agent-contract rating.
    pub ratings: f64,
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
        }
    }
}

impl Default for WeightsConfig {
    fn default() -> Self {
        Self {
            payments: 0.6,
            feedback: 0.2,
            validations: 0.1,
            ratings: 0.1,
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
            ("feedback", w.feedback),
            ("validations", w.validations),
            ("ratings", w.ratings),
        ] {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(bad(
                    &format!("weights.{name}"),
                    "must be a number, 0 or more",
                ));
            }
        }
        if w.payments + w.feedback + w.validations + w.ratings <= 0.0 {
            return Err(bad("weights", "at least one weight must be more than 0"));
        }
        Ok(())
    }
}

/// A finite number above zero (NaN and infinities are not).
fn positive(value: f64) -> bool {
    value.is_finite() && value > 0.0
}
