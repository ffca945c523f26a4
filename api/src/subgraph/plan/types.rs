//! What a plan is made of: the root fields a request asks, each list's filter, order and page,
//! and the fields of every entity answered, as `crate::subgraph::execute` runs them.

use crate::subgraph::catalogue::{Entity, Field};
use crate::subgraph::sql::Sql;

/// One field of the response, under the key it is answered with.
#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) key: String,
    pub(crate) what: What,
}

/// What a response field holds.
#[derive(Debug)]
pub(crate) enum What {
    /// `__typename`.
    Typename(&'static str),
    /// A scalar or list field read by its SQL.
    Column(&'static Field),
    /// A referenced entity.
    Ref(&'static Field, Vec<Item>),
    /// A derived list.
    Derived(&'static Field, Box<ListQuery>),
}

/// A list of entities: which, in what order, which page, and what of each.
#[derive(Debug)]
pub(crate) struct ListQuery {
    pub(crate) entity: &'static Entity,
    pub(crate) filter: Sql,
    /// Whether a clause of the filter finds its rows by an index (the page is then sorted from
    /// what that finds, never read walking an index in the page's order).
    pub(crate) narrowed: bool,
    pub(crate) order: &'static Field,
    pub(crate) descending: bool,
    pub(crate) first: i64,
    pub(crate) skip: i64,
    pub(crate) items: Vec<Item>,
    /// What an aggregation's SQL reads for its placeholders (`$INTERVAL`, `$CURRENT`): the
    /// `interval` and `current` arguments, as SQL literals.
    pub(crate) placeholders: Vec<(&'static str, String)>,
}

/// A field of the query root.
#[derive(Debug)]
pub(crate) enum Root {
    /// `agents(…)` and the like.
    List(ListQuery),
    /// `agent(id: …)` and the like.
    Single {
        entity: &'static Entity,
        id: String,
        items: Vec<Item>,
    },
    /// `_meta { … }`.
    Meta(Vec<MetaItem>),
    /// `__typename`.
    Typename,
}

/// A field of `_meta`, or of its `block`.
#[derive(Debug)]
pub(crate) struct MetaItem {
    pub(crate) key: String,
    pub(crate) name: String,
    pub(crate) items: Vec<MetaItem>,
}

/// What a request asks: each root field under its response key.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) roots: Vec<(String, Root)>,
    /// The block a `block: { number }` argument asked for, checked against the index later.
    pub(crate) block: Option<i64>,
}
