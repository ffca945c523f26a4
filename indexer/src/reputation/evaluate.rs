//! One agent's whole reputation as of one time, from its facts and the chain's trust rank: which
//! payments count and why the others do not, the payment features and score, its trust, the
//! feedback weighted by evidence, the validation and rating aggregates, and the composite score
//! over them. This is the function the stored reputation
//! rows and the reputation feed are made of, so both always agree.

use super::composite::{Components, Composite, composite};
use super::evidence::{FeedbackScore, feedback_score};
use super::features::{PaymentFeatures, features};
use super::feedback::{FeedbackAggregate, aggregate as feedback_aggregate};
use super::funding::ClusterMembership;
use super::one_per_cluster::{explain_clusters, one_per_cluster};
use super::payments::{Exclusion, Payment, exclusion};
use super::ratings::{Rating, RatingAggregate, aggregate as rating_aggregate};
use super::rules::ReputationRules;
use super::score::{Outflow, PaymentScore, Standing, payment_score};
use super::side::SideHistory;
use super::summary::FeedbackEntry;
use super::trust::{AgentTrust, TrustContribution, trust_component};
use super::validations::{
    ValidationAggregate, ValidationResponse, aggregate as validation_aggregate,
};
use alloy::primitives::Address;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything indexed about one agent that its reputation depends on, up to some block.
#[derive(Debug, Clone, Default)]
pub struct AgentFacts {
    /// Payments credited to the agent, in chain order.
    pub payments: Vec<Payment>,
    /// Its owner, operators and wallet over time.
    pub side: SideHistory,
    /// Funds its side sent out.
    pub outflows: Vec<Outflow>,
    /// ERC-8004 feedback, revocations applied.
    pub feedback: Vec<FeedbackEntry>,
    /// Responses appended to that feedback.
    pub feedback_responses: u64,
    /// Hashes of the ERC-8004 validation requests for it.
    pub validation_requests: Vec<String>,
    /// Every response to those requests.
    pub validation_responses: Vec<ValidationResponse>,
    /// Ratings of an agent contract.
    pub ratings: Vec<Rating>,
    /// The chain's trust rank as it bears on the agent, when the rank has spoken.
    pub trust: Option<TrustInputs>,
    /// Its endpoints' uptime over 7 days, 0–100, as this instance probed them: read only when
    /// availability weighs anything in the composite.
    pub availability: Option<f64>,
}

/// What the chain's trust rank says about one agent and its payers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustInputs {
    /// The block the rank is computed as of.
    pub epoch_block: u64,
    /// The agent's own trust (absent: nobody trusted paid it by then).
    pub agent: Option<AgentTrust>,
    /// Its payers' standing; a payer not listed has none.
    pub standing: BTreeMap<Address, f64>,
    /// The most payers without standing add to the payment sum together.
    pub unproven_cap: f64,
    /// The funding clusters of its payers that share one (a payer not listed is in none).
    pub clusters: BTreeMap<Address, ClusterMembership>,
}

/// An agent's trust in its evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustEvaluation {
    /// The block the rank is computed as of.
    pub epoch_block: u64,
    /// Trust relative to the average paid agent's.
    pub relative: f64,
    /// The trust component, 0–100.
    pub score: f64,
    /// The payers that passed it most trust.
    pub top_payers: Vec<TrustContribution>,
}

/// An agent's reputation as of one time, with every part that went into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The composite score (0 when no component has data) and its components.
    pub composite: Composite,
    /// Features of the payments that count.
    pub payments: PaymentFeatures,
    /// The payment score with each payer's part.
    pub payment_score: PaymentScore,
    /// Trust from the chain's trust rank, when it has spoken.
    #[serde(default)]
    pub trust: Option<TrustEvaluation>,
    /// Payments that do not count, by reason.
    pub excluded: BTreeMap<Exclusion, u64>,
    /// Feedback aggregate.
    pub feedback: FeedbackAggregate,
    /// The feedback component: every feedback weighed by the evidence behind it.
    #[serde(default)]
    pub feedback_evidence: FeedbackScore,
    /// Validation aggregate.
    pub validations: ValidationAggregate,
    /// Rating aggregate.
    pub ratings: RatingAggregate,
}

impl Evaluation {
    /// The composite score, 0 when there is nothing to score.
    pub fn score(&self) -> f64 {
        self.composite.score.unwrap_or(0.0)
    }
}

/// Why each of `facts.payments` does not count, judged by the agent's side when it was made
/// (`None`: it counts).
pub fn classify(facts: &AgentFacts, rules: &ReputationRules) -> Vec<Option<Exclusion>> {
    let positions: Vec<(u64, u64)> = facts
        .payments
        .iter()
        .map(|p| (p.block, p.log_index))
        .collect();
    let sides = facts.side.sides_at(&positions);
    facts
        .payments
        .iter()
        .zip(&sides)
        .map(|(payment, side)| exclusion(payment, side, &rules.tokens, &rules.intermediaries))
        .collect()
}

/// The payments of `facts` that count under `rules`, in chain order (the ones the trust rank
/// reads).
pub fn payments_that_count(facts: &AgentFacts, rules: &ReputationRules) -> Vec<Payment> {
    facts
        .payments
        .iter()
        .zip(classify(facts, rules))
        .filter(|(_, reason)| reason.is_none())
        .map(|(payment, _)| payment.clone())
        .collect()
}

/// Each payment of `facts`, in chain order, with why it does not count under `rules` (`None`:
/// it counts).
pub fn payments_with_exclusions(
    facts: AgentFacts,
    rules: &ReputationRules,
) -> Vec<(Payment, Option<Exclusion>)> {
    let reasons = classify(&facts, rules);
    facts.payments.into_iter().zip(reasons).collect()
}

/// The reputation `facts` give as of `as_of` (a block timestamp) under `rules`.
pub fn evaluate(facts: &AgentFacts, as_of: u64, rules: &ReputationRules) -> Evaluation {
    let mut excluded: BTreeMap<Exclusion, u64> = BTreeMap::new();
    let mut counted = Vec::with_capacity(facts.payments.len());
    for (payment, reason) in facts.payments.iter().zip(classify(facts, rules)) {
        if payment.timestamp > as_of {
            continue;
        }
        match reason {
            Some(reason) => *excluded.entry(reason).or_default() += 1,
            None => counted.push(payment.clone()),
        }
    }
    // Payers of one funding cluster are one payer from here on.
    let clustered = facts
        .trust
        .as_ref()
        .filter(|t| !t.clusters.is_empty())
        .map(|t| one_per_cluster(&counted, &facts.outflows, &t.standing, &t.clusters));
    let (seen, outflows, standing_of) = match &clustered {
        Some(view) => (&view.payments, &view.outflows, Some(&view.standing)),
        None => (
            &counted,
            &facts.outflows,
            facts.trust.as_ref().map(|t| &t.standing),
        ),
    };
    let payments = features(seen, &rules.tokens, as_of, rules.params.half_life_secs);
    let standing = facts
        .trust
        .as_ref()
        .zip(standing_of)
        .map(|(t, of)| Standing {
            of,
            cap: t.unproven_cap,
        });
    let mut payment_score = payment_score(seen, outflows, as_of, &rules.params, standing);
    if let (Some(_), Some(t)) = (&clustered, &facts.trust) {
        explain_clusters(&mut payment_score, &t.clusters);
    }
    let trust = facts
        .trust
        .as_ref()
        .filter(|_| payments.payment_count > 0)
        .map(|t| {
            let relative = t.agent.as_ref().map_or(0.0, |a| a.relative);
            TrustEvaluation {
                epoch_block: t.epoch_block,
                relative,
                score: trust_component(relative, &rules.trust),
                top_payers: t
                    .agent
                    .as_ref()
                    .map(|a| a.top_payers.clone())
                    .unwrap_or_default(),
            }
        });
    let feedback = FeedbackAggregate {
        responses: facts.feedback_responses,
        ..feedback_aggregate(&facts.feedback)
    };
    let feedback_evidence = feedback_score(&facts.feedback, &counted, &rules.feedback);
    let validations = validation_aggregate(&facts.validation_requests, &facts.validation_responses);
    let ratings = rating_aggregate(&facts.ratings);
    let components = Components {
        payments: (payments.payment_count > 0).then_some(payment_score.score),
        trust: trust.as_ref().map(|t| t.score),
        feedback: feedback_evidence.score,
        validations: validations.average,
        ratings: ratings.average,
        availability: facts
            .availability
            .filter(|_| rules.weights.availability > 0.0),
    };
    Evaluation {
        composite: composite(components, &rules.weights),
        payments,
        payment_score,
        trust,
        excluded,
        feedback,
        feedback_evidence,
        validations,
        ratings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reputation::payments::TokenRule;
    use crate::reputation::side::SideChange;
    use alloy::primitives::{Address, B256, U256};

    fn token() -> Address {
        Address::repeat_byte(0xaa)
    }

    fn rules() -> ReputationRules {
        ReputationRules {
            tokens: BTreeMap::from([(
                token(),
                TokenRule {
                    decimals: 6,
                    dust: U256::from(100u64),
                },
            )]),
            ..ReputationRules::default()
        }
    }

    fn pay(payer: u8, block: u64) -> Payment {
        Payment {
            payer: Address::repeat_byte(payer),
            payee: Address::repeat_byte(0xee),
            token: token(),
            amount: U256::from(1_000_000u64),
            block,
            log_index: 0,
            tx_hash: B256::ZERO,
            timestamp: block * 12,
            x402: false,
        }
    }

    #[test]
    fn the_owner_at_the_time_of_a_payment_decides_whether_it_counts() {
        let mut facts = AgentFacts {
            payments: vec![pay(1, 10), pay(1, 30), pay(2, 40)],
            ..AgentFacts::default()
        };
        facts
            .side
            .push((5, 0), SideChange::Owner(Address::repeat_byte(1)));
        facts
            .side
            .push((20, 0), SideChange::Owner(Address::repeat_byte(3)));
        let got = evaluate(&facts, 40 * 12, &rules());
        assert_eq!(got.excluded, BTreeMap::from([(Exclusion::Owner, 1)]));
        assert_eq!(
            got.payments.payment_count, 2,
            "the former owner's later payment counts"
        );
        assert_eq!(got.composite.score, Some(got.payment_score.score));
    }

    #[test]
    fn the_payments_that_count_are_those_without_a_reason_in_chain_order() {
        let mut dust = pay(4, 35);
        dust.amount = U256::from(99u64);
        let mut facts = AgentFacts {
            payments: vec![pay(1, 10), pay(2, 30), dust, pay(3, 50)],
            ..AgentFacts::default()
        };
        facts
            .side
            .push((20, 0), SideChange::Owner(Address::repeat_byte(2)));
        let reasons: Vec<Option<Exclusion>> = payments_with_exclusions(facts.clone(), &rules())
            .into_iter()
            .map(|(_, reason)| reason)
            .collect();
        assert_eq!(
            reasons,
            [None, Some(Exclusion::Owner), Some(Exclusion::Dust), None]
        );
        let paired: Vec<u64> = payments_with_exclusions(facts.clone(), &rules())
            .iter()
            .map(|(payment, _)| payment.block)
            .collect();
        assert_eq!(paired, [10, 30, 35, 50], "every payment, in chain order");
        let counted: Vec<u64> = payments_that_count(&facts, &rules())
            .iter()
            .map(|payment| payment.block)
            .collect();
        assert_eq!(counted, [10, 50]);
        assert!(payments_that_count(&AgentFacts::default(), &rules()).is_empty());
    }

    #[test]
    fn payments_after_the_time_are_left_out_and_nothing_scores_zero() {
        let facts = AgentFacts {
            payments: vec![pay(1, 10), pay(2, 50)],
            ..AgentFacts::default()
        };
        let got = evaluate(&facts, 10 * 12, &rules());
        assert_eq!(got.payments.payment_count, 1);
        let empty = evaluate(&AgentFacts::default(), 0, &rules());
        assert_eq!((empty.composite.score, empty.score()), (None, 0.0));
    }
}
