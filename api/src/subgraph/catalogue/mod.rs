//! The agent0 subgraph's schema as agentindex answers it: every entity, its fields with their
//! graph-node types, and the SQL that reads each field from agentindex's tables. Field names, id
//! formats and types follow the public subgraph (`Agent.id` is `chainId:agentId`, a feedback's
//! `chainId:agentId:client:index`, a response's `feedbackId:txHash:logIndex`); where the public
//! subgraph leaves a field empty and agentindex knows it (http registration files, the A2A
//! card's skills), the SQL fills it.
//!
//! The catalogue is written once per database ([`of`]): its SQL names tables through the schema
//! declarations (`schema::agents::NAME`) and takes every construct the two databases spell
//! differently (JSON, hex, the largest of several values) from the store's `Dialect`, so a
//! request only reads what is already written. [`types`] holds what it is made of, [`shared`] the
//! SQL several entities share, and [`agents`], [`reputation`] and [`stats`] the entities; the
//! timeseries are [`points`], their hourly and daily aggregations [`rollups`].

mod agents;
mod points;
mod reputation;
mod rollups;
mod shared;
mod stats;
mod types;

pub(crate) use types::{
    CURRENT, Entity, Field, INTERVAL, Link, Ordered, Paging, Part, Scalar, Shape, Walk,
};

use agentindex_indexer::schema::Column;
use agentindex_indexer::store::Dialect;
use std::sync::OnceLock;

/// Every entity of the schema, its SQL written for one database.
#[derive(Debug)]
pub(crate) struct Catalogue {
    /// The database the SQL is written for.
    pub(crate) dialect: Dialect,
    /// The entities, in the schema's order.
    pub(crate) entities: Vec<Entity>,
}

/// The catalogue written for `dialect`, written on first use and kept for the process.
pub(crate) fn of(dialect: Dialect) -> &'static Catalogue {
    static SQLITE: OnceLock<Catalogue> = OnceLock::new();
    static POSTGRES: OnceLock<Catalogue> = OnceLock::new();
    let cell = match dialect {
        Dialect::Sqlite => &SQLITE,
        Dialect::Postgres => &POSTGRES,
    };
    cell.get_or_init(|| Catalogue::written_for(dialect))
}

impl Catalogue {
    fn written_for(dialect: Dialect) -> Self {
        Self {
            dialect,
            entities: vec![
                agents::agent(dialect),
                agents::agent_registration_file(dialect),
                reputation::feedback(),
                reputation::feedback_response(dialect),
                reputation::feedback_file(dialect),
                reputation::validation(),
                agents::agent_metadata(dialect),
                stats::agent_stats(dialect),
                stats::global_stats(dialect),
                stats::protocol(dialect),
                points::agent_registration_point(),
                points::feedback_point(),
                points::validation_point(),
                rollups::protocol_agent_stats(),
                rollups::protocol_feedback_stats(),
                rollups::agent_feedback_stats(),
                rollups::protocol_validation_stats(),
                rollups::agent_validation_stats(),
            ],
        }
    }

    /// The entity named `name`.
    pub(crate) fn entity(&self, name: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.name == name)
    }

    /// The entity a query field reads, and whether it reads a list. `agentMetadata_collection`
    /// is `agentMetadatas` under the name some graph-node versions give it (the SDKs try both).
    pub(crate) fn query_field(&self, name: &str) -> Option<(&Entity, bool)> {
        let name = match name {
            "agentMetadata_collection" => "agentMetadatas",
            other => other,
        };
        self.entities.iter().find_map(|e| {
            // An aggregation has no single row by id: both its names read its list.
            if e.plural == name || (e.single == name && e.is_aggregation()) {
                Some((e, true))
            } else if e.single == name {
                Some((e, false))
            } else {
                None
            }
        })
    }
}

// --- writing the catalogue ----------------------------------------------------------------------
//
// A catalogue is written once per database and kept for the process, so its text is kept for
// the process too: two catalogues at most, a few dozen kilobytes each.

/// `text` kept for the process.
fn keep(text: impl Into<String>) -> &'static str {
    String::leak(text.into())
}

/// `items` kept for the process.
fn keep_all<T>(items: Vec<T>) -> &'static [T] {
    Vec::leak(items)
}

/// `alias.column`, kept.
fn at(alias: &str, column: Column) -> &'static str {
    keep(format!("{alias}.{column}"))
}

/// The column `child` of a derived list's entity equal to `parent` over its parent's row.
fn link(parent: &'static str, child: &'static str) -> Link {
    Link { parent, child }
}

/// An integer part of an id.
fn int(sql: &'static str) -> Part {
    Part { sql, integer: true }
}

/// A text part of an id.
fn text(sql: &'static str) -> Part {
    Part {
        sql,
        integer: false,
    }
}

/// `field`, its id read from `parts`.
fn parted(field: Field, parts: Vec<Part>) -> Field {
    Field {
        id_parts: keep_all(parts),
        ..field
    }
}

/// A field of `shape` read by `sql`, with none of the optional behaviours.
fn field(name: &'static str, shape: Shape, sql: impl Into<String>) -> Field {
    Field {
        name,
        shape,
        sql: keep(sql),
        compare: None,
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
        walk: None,
    }
}

fn scalar(name: &'static str, kind: Scalar, sql: impl Into<String>) -> Field {
    field(name, Shape::Scalar(kind), sql)
}

/// A scalar read by `sql` and compared (filtered, ordered) by `by`.
fn compared(
    name: &'static str,
    kind: Scalar,
    sql: impl Into<String>,
    by: impl Into<String>,
) -> Field {
    Field {
        compare: Some(keep(by)),
        ..scalar(name, kind, sql)
    }
}

fn list(name: &'static str, kind: Scalar, sql: impl Into<String>) -> Field {
    field(name, Shape::List(kind), sql)
}

/// A reference to `entity`, its id read by `sql` and its keys by `keys`.
fn reference(
    name: &'static str,
    entity: &'static str,
    sql: impl Into<String>,
    keys: &'static [&'static str],
) -> Field {
    field(name, Shape::Ref { entity, keys }, sql)
}

/// The `entity`s whose `by` equal this entity's keys, paged as `paging` says.
fn derived(
    name: &'static str,
    entity: &'static str,
    by: &'static [&'static str],
    paging: Paging,
) -> Field {
    let paging = Box::leak(Box::new(paging));
    field(name, Shape::Derived { entity, by, paging }, "")
}

#[cfg(test)]
mod tests;
