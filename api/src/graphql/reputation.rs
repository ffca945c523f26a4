//! `Agent.reputation`: the composite score beside every component, and for each component the
//! inputs that moved it most (the payers of the payment score with their standing, the payers
//! that passed the agent trust, every feedback with its weight and the evidence behind it).
//! Read from the stored evaluation, the same one the reputation feed publishes.

use crate::read::agents::AgentRow;
use agentindex_indexer::reputation::{Evaluation, WeightedFeedback, trust::TrustContribution};
use async_graphql::{Result, SimpleObject};

/// How many payers of the payment score are named.
const TOP_PAYERS: usize = 5;

/// Reputation and why: the composite score beside its components.
#[derive(SimpleObject)]
pub(crate) struct Reputation {
    /// Composite score, 0–100 (0 when nothing is known).
    score: f64,
    /// Payment score, 0–100.
    payment_score: f64,
    /// Payments that count.
    payment_count: i64,
    /// Distinct payers whose payments count.
    unique_payers: i64,
    /// Payments left out (self-payments, owner, operators, wallet, dust, unknown tokens).
    excluded_payments: i64,
    /// Unrevoked ERC-8004 feedback.
    feedback_count: i64,
    /// Their average value.
    feedback_average: Option<f64>,
    /// Average latest validation response (0–100).
    validation_average: Option<f64>,
    /// Average latest agent-contract rating (0–100).
    rating_average: Option<f64>,
    /// The block these numbers are as of.
    as_of_block: i64,
    /// Each component on 0–100, absent without data.
    components: Components,
    /// The weight each component actually had.
    weights: ComponentWeights,
    /// The payers that added most to the payment score.
    top_payers: Vec<ScorePayer>,
    /// What the payment graph's trust rank says, when it has spoken.
    trust: Option<Trust>,
    /// Every feedback weighed by the evidence behind it.
    feedback_evidence: Option<FeedbackEvidence>,
}

/// Composite components, each 0–100 or absent.
#[derive(SimpleObject)]
pub(crate) struct Components {
    /// Payment score.
    payments: Option<f64>,
    /// Trust rank.
    trust: Option<f64>,
    /// Feedback weighed by evidence, on 0–100.
    feedback: Option<f64>,
    /// Average latest validation response.
    validations: Option<f64>,
    /// Average latest rating.
    ratings: Option<f64>,
}

/// The weight each component had in the composite (absent ones 0).
#[derive(SimpleObject)]
pub(crate) struct ComponentWeights {
    /// Payments.
    payments: f64,
    /// Trust.
    trust: f64,
    /// Feedback.
    feedback: f64,
    /// Validations.
    validations: f64,
    /// Ratings.
    ratings: f64,
}

/// One payer's part in the payment score.
#[derive(SimpleObject)]
pub(crate) struct ScorePayer {
    /// The payer.
    payer: String,
    /// Payments counted from it.
    payments: i64,
    /// Its standing in the trust rank, 0–1 (1 when the rank has not spoken).
    standing: f64,
    /// What it added to the score's sum before the cap on payers without standing.
    contribution: f64,
}

/// The agent's trust from the trust rank.
#[derive(SimpleObject)]
pub(crate) struct Trust {
    /// The block the rank is computed as of.
    epoch_block: i64,
    /// Trust relative to the average paid agent's (1 = average).
    relative: f64,
    /// The component, 0–100.
    score: f64,
    /// The payers that passed it most trust.
    top_payers: Vec<TrustPayer>,
}

/// A payer's share of an agent's trust.
#[derive(SimpleObject)]
pub(crate) struct TrustPayer {
    /// The payer.
    payer: String,
    /// Trust passed, relative to the average agent's.
    trust: f64,
}

/// The feedback component with every feedback's part.
#[derive(SimpleObject)]
pub(crate) struct FeedbackEvidence {
    /// Total weight of the feedback.
    evidence_weight: f64,
    /// Clients that paid before their feedback.
    paid_clients: i64,
    /// Clients that had not paid.
    unpaid_clients: i64,
    /// Unpaid clients first seen in a burst.
    burst_clients: i64,
    /// Factor unpaid feedback was scaled by to stay under its cap (1 under it).
    unpaid_scale: f64,
    /// The feedback that moved the component most, strongest first.
    top: Vec<FeedbackWeight>,
    /// Every counted feedback, in chain order.
    feedback: Vec<FeedbackWeight>,
}

/// One feedback's weight and why.
#[derive(SimpleObject)]
pub(crate) struct FeedbackWeight {
    /// Who gave it.
    client: String,
    /// Block it was given in.
    block_number: i64,
    /// Its log's index.
    log_index: i64,
    /// Its value on 0–100.
    value: f64,
    /// paid | unpaid | burst.
    evidence: String,
    /// Its weight in the component.
    weight: f64,
    /// How far it moved the component.
    pull: f64,
}

impl Reputation {
    /// The reputation of the agent `row` describes, from its stored row and evaluation.
    pub(crate) fn of(row: &AgentRow) -> Result<Self> {
        let evaluation: Option<Evaluation> = row
            .evaluation
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|error| {
                    async_graphql::Error::new(format!(
                        "agent_reputation.evaluation does not read back: {error}"
                    ))
                })
            })
            .transpose()?;
        let composite = evaluation.as_ref().map(|e| &e.composite);
        let c = composite.map(|c| c.components).unwrap_or_default();
        let w = composite.map(|c| c.effective_weights);
        let weight =
            |pick: fn(&agentindex_indexer::reputation::Weights) -> f64| w.map_or(0.0, |w| pick(&w));
        let top_payers = evaluation
            .as_ref()
            .map(|e| {
                let mut payers: Vec<_> = e.payment_score.payers.iter().collect();
                payers.sort_by(|a, b| {
                    (b.standing * b.contribution)
                        .total_cmp(&(a.standing * a.contribution))
                        .then(a.payer.cmp(&b.payer))
                });
                payers
                    .into_iter()
                    .take(TOP_PAYERS)
                    .map(|p| ScorePayer {
                        payer: format!("{:#x}", p.payer),
                        payments: i64::try_from(p.payments).unwrap_or(i64::MAX),
                        standing: p.standing,
                        contribution: p.contribution,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let trust = evaluation
            .as_ref()
            .and_then(|e| e.trust.as_ref())
            .map(|t| Trust {
                epoch_block: i64::try_from(t.epoch_block).unwrap_or(i64::MAX),
                relative: t.relative,
                score: t.score,
                top_payers: t.top_payers.iter().map(trust_payer).collect(),
            });
        let feedback_evidence = evaluation
            .as_ref()
            .filter(|e| !e.feedback_evidence.feedback.is_empty())
            .map(|e| {
                let f = &e.feedback_evidence;
                let clients = |evidence| {
                    i64::try_from(f.clients.get(&evidence).copied().unwrap_or(0))
                        .unwrap_or(i64::MAX)
                };
                use agentindex_indexer::reputation::Evidence;
                FeedbackEvidence {
                    evidence_weight: f.evidence_weight,
                    paid_clients: clients(Evidence::Paid),
                    unpaid_clients: clients(Evidence::Unpaid),
                    burst_clients: clients(Evidence::Burst),
                    unpaid_scale: f.unpaid_scale,
                    top: f.top.iter().map(feedback_weight).collect(),
                    feedback: f.feedback.iter().map(feedback_weight).collect(),
                }
            });
        Ok(Reputation {
            score: row.score.unwrap_or(0.0),
            payment_score: row.payment_score.unwrap_or(0.0),
            payment_count: row.payment_count.unwrap_or(0),
            unique_payers: row.unique_payers.unwrap_or(0),
            excluded_payments: row.excluded_payments.unwrap_or(0),
            feedback_count: row.feedback_count.unwrap_or(0),
            feedback_average: row.feedback_average,
            validation_average: row.validation_average,
            rating_average: row.rating_average,
            as_of_block: row.as_of_block.unwrap_or(row.last_event_block),
            components: Components {
                payments: c.payments,
                trust: c.trust,
                feedback: c.feedback,
                validations: c.validations,
                ratings: c.ratings,
            },
            weights: ComponentWeights {
                payments: weight(|w| w.payments),
                trust: weight(|w| w.trust),
                feedback: weight(|w| w.feedback),
                validations: weight(|w| w.validations),
                ratings: weight(|w| w.ratings),
            },
            top_payers,
            trust,
            feedback_evidence,
        })
    }
}

fn trust_payer(contribution: &TrustContribution) -> TrustPayer {
    TrustPayer {
        payer: format!("{:#x}", contribution.payer),
        trust: contribution.trust,
    }
}

fn feedback_weight(f: &WeightedFeedback) -> FeedbackWeight {
    FeedbackWeight {
        client: format!("{:#x}", f.client),
        block_number: i64::try_from(f.position.0).unwrap_or(i64::MAX),
        log_index: i64::try_from(f.position.1).unwrap_or(i64::MAX),
        value: f.value,
        evidence: f.evidence.as_str().to_string(),
        weight: f.weight,
        pull: f.pull,
    }
}
