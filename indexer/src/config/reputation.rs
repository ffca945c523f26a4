//! `[reputation]`: the parameters of the payment score (see `docs/reputation.md`).

use super::{ConfigError, ConfigResult};
use crate::reputation::{ScoreParams, Weights};
use serde::Deserialize;

const DAY: f64 = 86_400.0;

/// `[reputation]`.
#[derive(Debug, Clone, Copy, Deserialize)]
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
    pub weights: Weights,
}

impl Default for ReputationConfig {
    fn default() -> Self {
        let params = ScoreParams::default();
        Self {
            half_life_days: params.half_life_secs / DAY,
            scale: params.scale,
            circular_discount: params.circular_discount,
            circular_window_days: params.circular_window_secs as f64 / DAY,
            weights: Weights::default(),
        }
    }
}

impl ReputationConfig {
    /// The score parameters these settings give.
    pub fn score_params(&self) -> ScoreParams {
        ScoreParams {
            half_life_secs: self.half_life_days * DAY,
            scale: self.scale,
            circular_discount: self.circular_discount,
            circular_window_secs: (self.circular_window_days * DAY) as u64,
        }
    }

    /// The composite weights.
    pub fn weights(&self) -> Weights {
        self.weights
    }

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
