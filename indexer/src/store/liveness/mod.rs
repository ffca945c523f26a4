//! What the prober saw, in the store: which endpoints agents declare (`targets.rs`, brought in
//! line with the agents' documents), which are due for a probe (here), saving probe outcomes
//! (`save.rs`), each agent's summary recomputed from them (`summaries.rs`), and raw outcomes
//! rolled up per day past the retention window (`rollup.rs`).
//!
//! Probes are this instance's observations, not chain facts: a reorg never touches them, no
//! stage owns their tables, and the canonical dump and the reputation feed leave them out.

mod rollup;
mod save;
mod summaries;
mod targets;

pub(super) use save::save;
pub(super) use targets::{Synced, sync};

use super::{QueryContext, StoreResult, decode};
use crate::liveness::{Kind, Outcome, Target};
use crate::schema::{agent_documents, documents, probe_endpoints, probe_targets};
use sqlx::AnyPool;

/// An endpoint due for a probe.
#[derive(Debug, Clone, PartialEq)]
pub struct DueProbe {
    /// What to probe, with what to compare the answer with.
    pub target: Target,
    /// Probes in a row so far that were not up.
    pub failures: i64,
}

/// One probe's outcome, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResult {
    /// What the probe saw.
    pub outcome: Outcome,
    /// When (unix seconds).
    pub checked_at: i64,
    /// Probes in a row that were not up, this one included.
    pub failures: i64,
    /// When to probe the endpoint again.
    pub next_probe_at: i64,
}

#[derive(sqlx::FromRow)]
struct DueRow {
    kind: String,
    url: String,
    failures: i64,
    protocol_version: Option<String>,
    card: Option<Vec<u8>>,
}

/// Endpoints due at `now`, soonest first, at most `limit`: each with the protocol version an
/// agent declared for it and, for a card, the indexed card's bytes.
pub(super) async fn due(pool: &AnyPool, now: i64, limit: i64) -> StoreResult<Vec<DueProbe>> {
    let rows: Vec<DueRow> = sqlx::query_as(&format!(
        "SELECT e.kind, e.url, e.failures,
           (SELECT min(t.protocol_version) FROM {targets} t WHERE t.kind = e.kind AND t.url = e.url)
             AS protocol_version,
           CASE WHEN e.kind = 'a2a_card' THEN
             (SELECT d.bytes FROM {targets} t
              JOIN {links} l ON l.agent_key = t.agent_key AND l.role = 'card'
              JOIN {documents_table} d ON d.uri = l.uri AND d.expect = l.expect
              WHERE t.kind = e.kind AND t.url = e.url AND d.bytes IS NOT NULL
                AND coalesce(d.source, d.uri) = e.url
              ORDER BY d.fetched_at DESC LIMIT 1)
           END AS card
         FROM {endpoints} e WHERE e.next_probe_at <= $1
         ORDER BY e.next_probe_at, e.shuffle LIMIT $2",
        targets = probe_targets::NAME,
        endpoints = probe_endpoints::NAME,
        documents_table = documents::NAME,
        links = agent_documents::NAME,
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(pool)
    .await
    .context("listing endpoints due for a probe")?;
    rows.into_iter()
        .map(|row| {
            let kind = Kind::parse(&row.kind).ok_or_else(|| {
                decode::corrupt(
                    probe_endpoints::NAME,
                    "kind",
                    &row.kind,
                    "not a kind of endpoint",
                )
            })?;
            let mut target = Target::new(kind, row.url);
            target.protocol_version = row.protocol_version;
            target.indexed_card = row.card;
            Ok(DueProbe {
                target,
                failures: row.failures,
            })
        })
        .collect()
}
