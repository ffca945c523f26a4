//! The composite score: one 0–100 number from the payment score, the trust rank, the
//! evidence-weighted feedback, the validation average and the rating average (and, when an
//! operator weighs it, the availability this instance probed), shown beside its components so a user sees why an
//! agent ranks where it does. A component the agent has no data for does not count, and the
//! weights of the others are scaled up to fill its place.

use crate::config::WeightsConfig;
use serde::{Deserialize, Serialize};

/// How much each component weighs (`[reputation.weights]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Weights {
    /// Payment score.
    pub payments: f64,
    /// Trust rank.
    pub trust: f64,
    /// Evidence-weighted feedback.
    pub feedback: f64,
    /// Average latest validation response.
    pub validations: f64,
    /// Average latest agent-contract rating.
    pub ratings: f64,
    /// Endpoint availability, as this instance probed it: left out of the stored form while it
    /// is 0 (the default), so rules and evaluations read as they did before it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub availability: f64,
}

/// Whether a weight is 0 (and so not written).
fn is_zero(weight: &f64) -> bool {
    *weight == 0.0
}

impl Default for Weights {
    fn default() -> Self {
        Self::from(&WeightsConfig::default())
    }
}

impl From<&WeightsConfig> for Weights {
    fn from(config: &WeightsConfig) -> Self {
        Self {
            payments: config.payments,
            trust: config.trust,
            feedback: config.feedback,
            validations: config.validations,
            ratings: config.ratings,
            availability: config.availability,
        }
    }
}

/// The components, each 0–100 or absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// Payment score.
    pub payments: Option<f64>,
    /// Trust rank.
    #[serde(default)]
    pub trust: Option<f64>,
    /// Evidence-weighted feedback, on a 0–100 scale.
    pub feedback: Option<f64>,
    /// Average latest validation response.
    pub validations: Option<f64>,
    /// Average latest rating.
    pub ratings: Option<f64>,
    /// Uptime of the agent's endpoints over 7 days, 0–100, when availability weighs anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<f64>,
}

/// A composite score with what went into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Composite {
    /// 0–100, or absent when no component has data.
    pub score: Option<f64>,
    /// The components, as given (clamped to 0–100).
    pub components: Components,
    /// The weight each component actually had (absent ones 0), summing to 1.
    pub effective_weights: Weights,
}

/// Combines `components` under `weights`.
pub fn composite(components: Components, weights: &Weights) -> Composite {
    let clamp = |v: Option<f64>| v.filter(|x| x.is_finite()).map(|x| x.clamp(0.0, 100.0));
    let components = Components {
        payments: clamp(components.payments),
        trust: clamp(components.trust),
        feedback: clamp(components.feedback),
        validations: clamp(components.validations),
        ratings: clamp(components.ratings),
        availability: clamp(components.availability),
    };
    let parts = [
        (components.payments, weights.payments.max(0.0)),
        (components.trust, weights.trust.max(0.0)),
        (components.feedback, weights.feedback.max(0.0)),
        (components.validations, weights.validations.max(0.0)),
        (components.ratings, weights.ratings.max(0.0)),
        (components.availability, weights.availability.max(0.0)),
    ];
    let total: f64 = parts
        .iter()
        .filter(|(v, _)| v.is_some())
        .map(|(_, w)| w)
        .sum();
    let share = |value: Option<f64>, weight: f64| {
        if value.is_some() && total > 0.0 {
            weight / total
        } else {
            0.0
        }
    };
    let effective_weights = Weights {
        payments: share(parts[0].0, parts[0].1),
        trust: share(parts[1].0, parts[1].1),
        feedback: share(parts[2].0, parts[2].1),
        validations: share(parts[3].0, parts[3].1),
        ratings: share(parts[4].0, parts[4].1),
        availability: share(parts[5].0, parts[5].1),
    };
    let score = (total > 0.0).then(|| {
        parts
            .iter()
            .filter_map(|(v, w)| v.map(|v| v * w / total))
            .sum()
    });
    Composite {
        score,
        components,
        effective_weights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_components_weigh_as_configured() {
        let got = composite(
            Components {
                payments: Some(50.0),
                trust: Some(30.0),
                feedback: Some(100.0),
                validations: Some(0.0),
                ratings: Some(80.0),
                availability: None,
            },
            &Weights::default(),
        );
        let expected = 0.3 * 50.0 + 0.3 * 30.0 + 0.2 * 100.0 + 0.1 * 0.0 + 0.1 * 80.0;
        assert!((got.score.unwrap() - expected).abs() < 1e-9);
        assert_eq!(got.effective_weights, Weights::default());
    }

    #[test]
    fn availability_weighs_only_when_an_operator_gives_it_a_weight() {
        let components = Components {
            payments: Some(60.0),
            availability: Some(20.0),
            ..Components::default()
        };
        let unweighed = composite(components, &Weights::default());
        assert_eq!(unweighed.score, Some(60.0));
        let stored = serde_json::to_string(&unweighed.effective_weights).unwrap();
        assert!(!stored.contains("availability"), "{stored}");
        let weights = Weights {
            availability: 0.3,
            ..Weights::default()
        };
        let weighed = composite(components, &weights);
        assert!((weighed.effective_weights.availability - 0.5).abs() < 1e-9);
        assert!((weighed.score.unwrap() - 40.0).abs() < 1e-9);
        let stored = serde_json::to_string(&weighed.components).unwrap();
        assert!(stored.contains("\"availability\":20"), "{stored}");
        let without = serde_json::to_string(&Components::default()).unwrap();
        assert!(!without.contains("availability"), "{without}");
    }

    #[test]
    fn a_missing_component_hands_its_weight_to_the_others() {
        let got = composite(
            Components {
                payments: Some(40.0),
                feedback: Some(90.0),
                ..Components::default()
            },
            &Weights::default(),
        );
        assert!((got.effective_weights.payments - 0.6).abs() < 1e-9);
        assert!((got.effective_weights.feedback - 0.4).abs() < 1e-9);
        assert_eq!(got.effective_weights.validations, 0.0);
        assert!((got.score.unwrap() - (0.6 * 40.0 + 0.4 * 90.0)).abs() < 1e-9);
        assert_eq!(
            composite(Components::default(), &Weights::default()).score,
            None
        );
    }

    #[test]
    fn components_are_read_on_a_0_to_100_scale() {
        let got = composite(
            Components {
                feedback: Some(250.0),
                ratings: Some(-5.0),
                validations: Some(f64::NAN),
                ..Components::default()
            },
            &Weights::default(),
        );
        assert_eq!(got.components.feedback, Some(100.0));
        assert_eq!(got.components.ratings, Some(0.0));
        assert_eq!(got.components.validations, None, "not a number is no data");
        assert!((got.score.unwrap() - 100.0 * 2.0 / 3.0).abs() < 1e-9);
    }
}
