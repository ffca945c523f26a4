//! Saving probe outcomes: each endpoint's state and schedule, the raw outcome (of endpoints
//! still declared: one a sync dropped while it was probed is not brought back), the summaries of
//! the agents that declare the endpoints, and the raw outcomes past the retention window rolled
//! up per day. One transaction a step of the prober, so readers see a step whole, and a few
//! statements for all its outcomes, so the transaction is short.

use super::{ProbeResult, rollup, summaries};
use crate::schema::{probe_endpoints, probe_results, probe_targets};
use crate::store::in_list::padded;
use crate::store::sql::write_rows;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Outcomes written per statement (13 bound values each).
const OUTCOMES_PER_STATEMENT: usize = 200;

/// Stores `results` probed by `now`; raw outcomes older than `retention_secs` are rolled up.
/// Returns the agents whose liveness was recomputed.
pub(crate) async fn save(
    conn: &mut AnyConnection,
    results: &[ProbeResult],
    now: i64,
    retention_secs: i64,
) -> StoreResult<Vec<String>> {
    // An endpoint probed twice keeps its later outcome as its state (both are kept raw).
    let latest: BTreeMap<(&str, &str), &ProbeResult> = results
        .iter()
        .map(|r| ((r.outcome.kind.as_str(), r.outcome.url.as_str()), r))
        .collect();
    let latest: Vec<&ProbeResult> = latest.into_values().collect();
    let mut agents = BTreeSet::new();
    for chunk in latest.chunks(OUTCOMES_PER_STATEMENT) {
        update_endpoints(conn, chunk).await?;
        agents.extend(declaring(conn, chunk).await?);
    }
    for chunk in results.chunks(OUTCOMES_PER_STATEMENT) {
        keep_outcomes(conn, chunk).await?;
    }
    let agents: Vec<String> = agents.into_iter().collect();
    summaries::recompute(conn, &agents, now).await?;
    rollup::roll_up(conn, now - retention_secs).await?;
    Ok(agents)
}

/// Each endpoint's state and when it is due again; an endpoint a sync dropped meanwhile is
/// not brought back.
async fn update_endpoints(conn: &mut AnyConnection, results: &[&ProbeResult]) -> StoreResult<()> {
    let mut upsert = QueryBuilder::<Any>::new(format!(
        "INSERT INTO {endpoints} (kind, url, status, reason, error, failures, checked_at,
           next_probe_at, last_ok_at, latency_ms, http_status, protocol_version, detail, shuffle)
         SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7,
           v.column8, v.column9, v.column10, v.column11, v.column12, v.column13, 0
         FROM (",
        endpoints = probe_endpoints::NAME,
    ));
    upsert.push_values(results, |mut row, result| {
        let outcome = &result.outcome;
        row.push_bind(outcome.kind.as_str())
            .push_bind(outcome.url.clone())
            .push_bind(outcome.status.as_str())
            .push_bind(outcome.reason.map(|r| r.as_str()))
            .push_bind(outcome.error.clone())
            .push_bind(result.failures)
            .push_bind(result.checked_at)
            .push_bind(result.next_probe_at)
            .push_bind(outcome.status.answered().then_some(result.checked_at))
            .push_bind(outcome.latency_ms)
            .push_bind(outcome.http_status.map(i64::from))
            .push_bind(outcome.protocol_version.clone())
            .push_bind((!outcome.detail.is_null()).then(|| outcome.detail.to_string()));
    });
    upsert.push(format!(
        ") v WHERE EXISTS (SELECT 1 FROM {endpoints} e WHERE e.kind = v.column1 AND e.url = v.column2)
         ON CONFLICT (kind, url) DO UPDATE SET status = excluded.status,
           reason = excluded.reason, error = excluded.error, failures = excluded.failures,
           checked_at = excluded.checked_at, next_probe_at = excluded.next_probe_at,
           last_ok_at = coalesce(excluded.last_ok_at, {endpoints}.last_ok_at),
           latency_ms = excluded.latency_ms, http_status = excluded.http_status,
           protocol_version = excluded.protocol_version, detail = excluded.detail",
        endpoints = probe_endpoints::NAME,
    ));
    write_rows(
        conn,
        upsert,
        results.len(),
        OUTCOMES_PER_STATEMENT,
        "saving endpoints' probes",
    )
    .await?;
    Ok(())
}

/// The raw outcomes of endpoints still declared, kept for the retention window.
async fn keep_outcomes(conn: &mut AnyConnection, results: &[ProbeResult]) -> StoreResult<()> {
    let mut insert = QueryBuilder::<Any>::new(format!(
        "INSERT INTO {results_table} (kind, url, checked_at, status, reason, latency_ms, http_status)
         SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7 FROM (",
        results_table = probe_results::NAME,
    ));
    insert.push_values(results, |mut row, result| {
        let outcome = &result.outcome;
        row.push_bind(outcome.kind.as_str())
            .push_bind(outcome.url.clone())
            .push_bind(result.checked_at)
            .push_bind(outcome.status.as_str())
            .push_bind(outcome.reason.map(|r| r.as_str()))
            .push_bind(outcome.latency_ms)
            .push_bind(outcome.http_status.map(i64::from));
    });
    insert.push(format!(
        ") v WHERE EXISTS (SELECT 1 FROM {endpoints} e WHERE e.kind = v.column1 AND e.url = v.column2)
         ON CONFLICT DO NOTHING",
        endpoints = probe_endpoints::NAME,
    ));
    write_rows(
        conn,
        insert,
        results.len(),
        OUTCOMES_PER_STATEMENT,
        "keeping probes' outcomes",
    )
    .await?;
    Ok(())
}

/// The agents that declare the endpoints of `results`.
async fn declaring(conn: &mut AnyConnection, results: &[&ProbeResult]) -> StoreResult<Vec<String>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT DISTINCT agent_key FROM {targets} WHERE (kind, url) IN (",
        targets = probe_targets::NAME,
    ));
    // Padded like every list tested with IN (`store::in_list`): few statement texts.
    query.push_values(padded(results.iter().copied()), |mut pair, result| {
        pair.push_bind(result.outcome.kind.as_str())
            .push_bind(result.outcome.url.clone());
    });
    query.push(")");
    Dialect::of(conn)
        .portable(query)
        .build_query_scalar()
        .fetch_all(&mut *conn)
        .await
        .context("listing the agents that declare endpoints")
}
