//! The API's read queries over the store's read-only pool: agents with their profile and stored
//! reputation, filtered, searched and ordered ([`agents`]), skills by agent ([`skills`]), and
//! what committed batches changed, for subscriptions ([`changes`]), and dashboard aggregates
//! ([`facets`]).

pub(crate) mod agents;
pub(crate) mod changes;
pub(crate) mod facets;
pub(crate) mod skills;
