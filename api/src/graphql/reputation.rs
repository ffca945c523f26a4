//! `Agent.reputation`: the composite score beside every component, and for each component the
//! inputs that moved it most (the payers of the payment score with their standing, the payers
//! that passed the agent trust, every feedback with its weight and the evidence behind it).
//! The numbers are columns of the agent's row; the rest is read from the stored evaluation (the
//! same one the reputation feed publishes) only when a query asks for it.

use super::loader_set::Loaders;
use crate::read::agents::AgentRow;
use agentindex_indexer::reputation::{
    Evaluation, Evidence, WeightedFeedback, Weights, trust::TrustContribution,
};
use async_graphql::{Context, Object, Result, SimpleObject};
use std::sync::Arc;

/// How many payers of the payment score are named.
const TOP_PAYERS: usize = 5;

/// Reputation and why: the composite score beside its components. The numbers come with the
/// agent's row; the components and their inputs are read from the stored evaluation, through a
/// DataLoader, only when asked for.
pub(crate) struct Reputation {
    agent_key: String,
    score: f64,
    payment_score: f64,
    payment_count: i64,
    unique_payers: i64,
    excluded_payments: i64,
    feedback_count: i64,
    feedback_average: Option<f64>,
    validation_average: Option<f64>,
    rating_average: Option<f64>,
    as_of_block: i64,
}

/// Reputation and why: the composite score beside its components.
#[Object]
impl Reputation {
    /// Composite score, 0–100 (0 when nothing is known).
    async fn score(&self) -> f64 {
        self.score
    }

    /// Payment score, 0–100.
    async fn payment_score(&self) -> f64 {
        self.payment_score
    }

    /// Payments that count.
    async fn payment_count(&self) -> i64 {
        self.payment_count
    }

    /// Distinct payers whose payments count.
    async fn unique_payers(&self) -> i64 {
        self.unique_payers
    }

    /// Payments left out (self-payments, owner, operators, wallet, dust, unknown tokens).
    async fn excluded_payments(&self) -> i64 {
        self.excluded_payments
    }

    /// Unrevoked ERC-8004 feedback.
    async fn feedback_count(&self) -> i64 {
        self.feedback_count
    }

    /// Their average value.
    async fn feedback_average(&self) -> Option<f64> {
        self.feedback_average
    }

    /// Average latest validation response (0–100).
    async fn validation_average(&self) -> Option<f64> {
        self.validation_average
    }

    /// Average latest agent-contract rating (0–100).
    async fn rating_average(&self) -> Option<f64> {
        self.rating_average
    }

    /// The block these numbers are as of.
    async fn as_of_block(&self) -> i64 {
        self.as_of_block
    }

    /// Each component on 0–100, absent without data.
    async fn components(&self, ctx: &Context<'_>) -> Result<Components> {
        let c = self
            .evaluation(ctx)
            .await?
            .map(|e| e.composite.components)
            .unwrap_or_default();
        Ok(Components {
            payments: c.payments,
            trust: c.trust,
            feedback: c.feedback,
            validations: c.validations,
            ratings: c.ratings,
            availability: c.availability,
        })
    }

    /// The weight each component actually had.
    async fn weights(&self, ctx: &Context<'_>) -> Result<ComponentWeights> {
        let w = self
            .evaluation(ctx)
            .await?
            .map(|e| e.composite.effective_weights);
        let weight = |pick: fn(&Weights) -> f64| w.map_or(0.0, |w| pick(&w));
        Ok(ComponentWeights {
            payments: weight(|w| w.payments),
            trust: weight(|w| w.trust),
            feedback: weight(|w| w.feedback),
            validations: weight(|w| w.validations),
            ratings: weight(|w| w.ratings),
            availability: weight(|w| w.availability),
        })
    }

    /// The payers that added most to the payment score.
    async fn top_payers(&self, ctx: &Context<'_>) -> Result<Vec<ScorePayer>> {
        let Some(e) = self.evaluation(ctx).await? else {
            return Ok(Vec::new());
        };
        let mut payers: Vec<_> = e.payment_score.payers.iter().collect();
        payers.sort_by(|a, b| {
            (b.standing * b.contribution)
                .total_cmp(&(a.standing * a.contribution))
                .then(a.payer.cmp(&b.payer))
        });
        Ok(payers
            .into_iter()
            .take(TOP_PAYERS)
            .map(|p| ScorePayer {
                payer: format!("{:#x}", p.payer),
                payments: i64::try_from(p.payments).unwrap_or(i64::MAX),
                standing: p.standing,
                contribution: p.contribution,
                cluster: p.cluster.as_ref().map(|c| FundingCluster {
                    funder: format!("{:#x}", c.funder),
                    size: i64::try_from(c.size).unwrap_or(i64::MAX),
                    block: i64::try_from(c.block).unwrap_or(i64::MAX),
                }),
            })
            .collect())
    }

    /// What the payment graph's trust rank says, when it has spoken.
    async fn trust(&self, ctx: &Context<'_>) -> Result<Option<Trust>> {
        let evaluation = self.evaluation(ctx).await?;
        Ok(evaluation
            .as_ref()
            .and_then(|e| e.trust.as_ref())
            .map(|t| Trust {
                epoch_block: i64::try_from(t.epoch_block).unwrap_or(i64::MAX),
                relative: t.relative,
                score: t.score,
                top_payers: t.top_payers.iter().map(trust_payer).collect(),
            }))
    }

    /// Every feedback weighed by the evidence behind it.
    async fn feedback_evidence(&self, ctx: &Context<'_>) -> Result<Option<FeedbackEvidence>> {
        let Some(e) = self.evaluation(ctx).await? else {
            return Ok(None);
        };
        let f = &e.feedback_evidence;
        if f.feedback.is_empty() {
            return Ok(None);
        }
        let clients = |evidence| {
            i64::try_from(f.clients.get(&evidence).copied().unwrap_or(0)).unwrap_or(i64::MAX)
        };
        Ok(Some(FeedbackEvidence {
            evidence_weight: f.evidence_weight,
            paid_clients: clients(Evidence::Paid),
            proven_clients: clients(Evidence::Proven),
            unpaid_clients: clients(Evidence::Unpaid),
            burst_clients: clients(Evidence::Burst),
            unpaid_scale: f.unpaid_scale,
            top: f.top.iter().map(feedback_weight).collect(),
            feedback: f.feedback.iter().map(feedback_weight).collect(),
        }))
    }
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
    /// Endpoint uptime over 7 days as this instance probed it, on 0–100: present only where
    /// the operator weighs availability (`[reputation.weights] availability`).
    availability: Option<f64>,
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
    /// Availability (0 unless the operator weighs it).
    availability: f64,
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
    /// When the payer stands for a funding cluster (payers whose money came from one account
    /// shortly before they paid, counted as one payer): which, and why.
    cluster: Option<FundingCluster>,
}

/// Payers counted as one because their money came from one place (docs/reputation.md, "Who
/// really pays").
#[derive(SimpleObject)]
pub(crate) struct FundingCluster {
    /// The account that funded most of its members.
    funder: String,
    /// Payers in the cluster.
    size: i64,
    /// The block its funding began.
    block: i64,
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
    /// Clients whose feedback file proved a payment made from another address.
    proven_clients: i64,
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
    /// paid | proven | unpaid | burst.
    evidence: String,
    /// For `proven`: the transaction of the payment its feedback file cited.
    proof_tx_hash: Option<String>,
    /// Its weight in the component.
    weight: f64,
    /// How far it moved the component.
    pull: f64,
}

impl Reputation {
    /// The reputation of the agent `row` describes, from its stored row.
    pub(crate) fn of(row: &AgentRow) -> Self {
        Self {
            agent_key: row.agent_key.clone(),
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
        }
    }

    /// The agent's stored evaluation, read once per request for every agent that asks.
    async fn evaluation(&self, ctx: &Context<'_>) -> Result<Option<Arc<Evaluation>>> {
        let loader = &ctx.data_unchecked::<Loaders>().evaluations;
        Ok(loader.load_one(self.agent_key.clone()).await?)
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
        proof_tx_hash: f.proof.map(|tx| format!("{tx:#x}")),
        weight: f.weight,
        pull: f.pull,
    }
}
