//! The API's read queries over the store's read-only pool: agents with their profile and stored
//! reputation, filtered, searched and ordered ([`agents`]), and skills by agent ([`skills`]).

pub(crate) mod agents;
pub(crate) mod skills;
