//! Saving probe outcomes: each endpoint's state and schedule, the raw outcome, the summaries of
//! the agents that declare the endpoints, and the raw outcomes past the retention window rolled
//! up per day. One transaction a step of the prober, so readers see a step whole.

use super::{ProbeResult, rollup, summaries};
use crate::schema::{probe_endpoints, probe_results, probe_targets};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeSet;

/// Stores `results` probed by `now`; raw outcomes older than `retention_secs` are rolled up.
/// Returns the agents whose liveness was recomputed.
pub(crate) async fn save(
    conn: &mut AnyConnection,
    results: &[ProbeResult],
    now: i64,
    retention_secs: i64,
) -> StoreResult<Vec<String>> {
    let mut agents = BTreeSet::new();
    for result in results {
        let outcome = &result.outcome;
        let kind = outcome.kind.as_str();
        let detail = (!outcome.detail.is_null()).then(|| outcome.detail.to_string());
        sqlx::query(&format!(
            "UPDATE {endpoints} SET status = $1, reason = $2, error = $3, failures = $4,
               checked_at = $5, next_probe_at = $6,
               last_ok_at = CASE WHEN $7 = 1 THEN $5 ELSE last_ok_at END,
               latency_ms = $8, http_status = $9, protocol_version = $10, detail = $11
             WHERE kind = $12 AND url = $13",
            endpoints = probe_endpoints::NAME,
        ))
        .bind(outcome.status.as_str())
        .bind(outcome.reason.map(|r| r.as_str()))
        .bind(outcome.error.as_deref())
        .bind(result.failures)
        .bind(result.checked_at)
        .bind(result.next_probe_at)
        .bind(i64::from(outcome.status.answered()))
        .bind(outcome.latency_ms)
        .bind(outcome.http_status.map(i64::from))
        .bind(outcome.protocol_version.as_deref())
        .bind(detail)
        .bind(kind)
        .bind(&outcome.url)
        .execute(&mut *conn)
        .await
        .context("saving an endpoint's probe")?;
        sqlx::query(&format!(
            "INSERT INTO {results_table} (kind, url, checked_at, status, reason, latency_ms, http_status)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
            results_table = probe_results::NAME,
        ))
        .bind(kind)
        .bind(&outcome.url)
        .bind(result.checked_at)
        .bind(outcome.status.as_str())
        .bind(outcome.reason.map(|r| r.as_str()))
        .bind(outcome.latency_ms)
        .bind(outcome.http_status.map(i64::from))
        .execute(&mut *conn)
        .await
        .context("keeping a probe's outcome")?;
        let declaring: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT agent_key FROM {targets} WHERE kind = $1 AND url = $2",
            targets = probe_targets::NAME,
        ))
        .bind(kind)
        .bind(&outcome.url)
        .fetch_all(&mut *conn)
        .await
        .context("listing the agents that declare an endpoint")?;
        agents.extend(declaring);
    }
    let agents: Vec<String> = agents.into_iter().collect();
    summaries::recompute(conn, &agents, now).await?;
    rollup::roll_up(conn, now - retention_secs).await?;
    Ok(agents)
}
