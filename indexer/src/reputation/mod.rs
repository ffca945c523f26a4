//! Reputation: which agents a transfer or a channel claim is credited to ([`crediting`]), which
//! payments count ([`payments`]), what they say about an agent ([`features`]), the payment
//! score ([`score`]), the trust rank over the payment graph ([`trust`]) with payers grouped by
//! who funded them ([`funding`]), feedback weighted by its evidence ([`evidence`]), feedback,
//! validation and rating aggregates ([`feedback`], [`validations`], [`ratings`]), the composite
//! score ([`composite`]), ERC-8004 `getSummary` ([`summary`]), who stood on the agent's side
//! when ([`side`]), and all of it for one agent at once ([`evaluate`]) under one chain's
//! [`rules`]. All are pure functions of indexed data and a block's timestamp, so two instances
//! at the same block compute the same numbers. The formula is explained in
//! `docs/reputation.md`; stored rows and the feed are in `store::reputation`.

pub mod composite;
pub mod crediting;
pub mod evaluate;
pub mod evidence;
pub mod features;
pub mod feedback;
pub mod funding;
pub mod funding_trail;
pub mod one_per_cluster;
pub mod payments;
pub mod ratings;
pub mod rollout;
pub mod rules;
pub mod score;
pub mod side;
pub mod summary;
pub mod trust;
pub mod validations;

pub use composite::{Components, Composite, Weights, composite};
pub use evaluate::{
    AgentFacts, Evaluation, TrustEvaluation, TrustInputs, classify, evaluate, payments_that_count,
    payments_with_exclusions,
};
pub use evidence::{Evidence, FeedbackParams, FeedbackScore, WeightedFeedback, feedback_score};
pub use features::{PaymentFeatures, features};
pub use feedback::{FeedbackAggregate, Tally, aggregate};
pub use funding::{
    ClusterMembership, FundingEdge, FundingParams, PayerCluster, PayerClusters, payer_clusters,
    with_next_moves,
};
pub use payments::{AgentSide, Exclusion, Intermediaries, Payment, TokenRule, exclusion};
pub use ratings::{Rating, RatingAggregate};
pub use rollout::{ROLLOUT_GROUPS, rollout_group};
pub use rules::ReputationRules;
pub use score::{Outflow, PaymentScore, ScoreParams, Standing, payment_score};
pub use side::{SideChange, SideHistory};
pub use summary::{CitedPayment, FeedbackEntry, Summary, get_summary};
pub use trust::{AgentTrust, PaidEdge, TrustParams, TrustRank, trust_component, trust_rank};
pub use validations::{ValidationAggregate, ValidationResponse};

#[cfg(test)]
mod canonical_tests;
#[cfg(test)]
mod tests;
