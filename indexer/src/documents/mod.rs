//! The documents the chain points at: ERC-8004 registration files and A2A Agent Cards. This
//! module resolves their URIs ([`uri`]), reads them into projections ([`card`],
//! [`registration`], with payment terms from [`payments`]; feedback files' proofs of payment
//! with [`feedback`]) and reports what is wrong with them ([`lint`]); a [`Checker`] verifies
//! cards' signatures too. Reading never fails on bad content: a document that is not what it
//! should be gives a report with errors, and whatever could still be read.

pub mod address;
mod canonical;
pub mod card;
pub mod check;
mod checker;
pub mod cid;
mod dns;
mod extension;
pub mod feedback;
pub mod fetch;
mod json;
mod jwks;
pub mod lint;
pub mod masumi;
pub mod payments;
pub mod profile;
pub mod registration;
pub mod search_postings;
pub mod signature;
pub mod uri;

pub use card::{CardProjection, Skill, parse_card, read_card};
pub use check::{Checked, Expect, Projection, check, check_until};
pub use checker::Checker;
pub use feedback::{FeedbackFileProjection, ProofOfPayment, parse_feedback_file};
pub use fetch::{Answer, FetchError, FetchPolicy, Fetched, Fetcher, Request, Validators};
pub use lint::{Lint, Report, Severity};
pub use profile::{ChainAgent, LinkRole, LinkedDocument, Profile, build_profile};
pub use registration::{RegistrationProjection, Service, parse_registration};

#[cfg(test)]
mod address_tests;
#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod masumi_tests;
#[cfg(test)]
mod properties;
#[cfg(test)]
mod signature_tests;
#[cfg(test)]
mod tests;
