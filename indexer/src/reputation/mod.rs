//! Reputation: which payments count ([`payments`]), what they say about an agent
//! ([`features`]), the payment score ([`score`]), feedback, validation and rating aggregates
//! ([`feedback`], [`validations`], [`ratings`]), the composite score ([`composite`]) and
//! ERC-8004 `getSummary` ([`summary`]). All are pure functions of indexed data and a block's
//! timestamp, so two instances at the same block compute the same numbers. The formula is
//! explained in `docs/reputation.md`.

pub mod composite;
pub mod features;
pub mod feedback;
pub mod payments;
pub mod ratings;
pub mod score;
pub mod summary;
pub mod validations;

pub use composite::{Components, Composite, Weights, composite};
pub use features::{PaymentFeatures, features};
pub use feedback::{FeedbackAggregate, Tally, aggregate};
pub use payments::{AgentSide, Exclusion, Payment, TokenRule, exclusion};
pub use ratings::{Rating, RatingAggregate};
pub use score::{Outflow, PaymentScore, ScoreParams, payment_score};
pub use summary::{FeedbackEntry, Summary, get_summary};
pub use validations::{ValidationAggregate, ValidationResponse};

#[cfg(test)]
mod tests;
