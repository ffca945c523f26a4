//! Raw outcomes past the retention window rolled up per endpoint and UTC day (`probe_daily`:
//! probes, answered, median and largest latency), then deleted. One day a call, the oldest
//! first, so a call's work is bounded by a day of probes (the global budget caps those).

use crate::liveness::Status;
use crate::liveness::rollup::median;
use crate::liveness::summary::DAY;
use crate::schema::{probe_daily, probe_results};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

#[derive(sqlx::FromRow)]
struct RawRow {
    kind: String,
    url: String,
    status: String,
    latency_ms: Option<i64>,
}

/// Rolls up the oldest whole day of raw outcomes when it ended before `cutoff`.
pub(super) async fn roll_up(conn: &mut AnyConnection, cutoff: i64) -> StoreResult<()> {
    let oldest: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT min(checked_at) FROM {results}",
        results = probe_results::NAME
    ))
    .fetch_one(&mut *conn)
    .await
    .context("finding the oldest probe outcome")?;
    let Some(oldest) = oldest else {
        return Ok(());
    };
    let day = oldest - oldest.rem_euclid(DAY);
    if day + DAY > cutoff {
        return Ok(());
    }
    let rows: Vec<RawRow> = sqlx::query_as(&format!(
        "SELECT kind, url, status, latency_ms FROM {results}
         WHERE checked_at >= $1 AND checked_at < $2",
        results = probe_results::NAME
    ))
    .bind(day)
    .bind(day + DAY)
    .fetch_all(&mut *conn)
    .await
    .context("reading a day of probe outcomes")?;
    let mut days: BTreeMap<(String, String), (i64, Vec<i64>)> = BTreeMap::new();
    for row in rows {
        let answered = Status::parse(&row.status).is_some_and(Status::answered);
        let entry = days.entry((row.kind, row.url)).or_default();
        entry.0 += 1;
        if answered {
            entry.1.push(row.latency_ms.unwrap_or(0));
        }
    }
    for ((kind, url), (probes, mut latencies)) in days {
        let answered = latencies.len() as i64;
        let largest = latencies.iter().copied().max();
        sqlx::query(&format!(
            "INSERT INTO {daily} (kind, url, day, probes, answered, latency_p50_ms, latency_max_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (kind, url, day) DO UPDATE SET probes = {daily}.probes + excluded.probes,
               answered = {daily}.answered + excluded.answered,
               latency_p50_ms = coalesce(excluded.latency_p50_ms, {daily}.latency_p50_ms),
               latency_max_ms = coalesce(excluded.latency_max_ms, {daily}.latency_max_ms)",
            daily = probe_daily::NAME
        ))
        .bind(&kind)
        .bind(&url)
        .bind(day)
        .bind(probes)
        .bind(answered)
        .bind(median(&mut latencies))
        .bind(largest)
        .execute(&mut *conn)
        .await
        .context("rolling up a day of probes")?;
    }
    sqlx::query(&format!(
        "DELETE FROM {results} WHERE checked_at >= $1 AND checked_at < $2",
        results = probe_results::NAME
    ))
    .bind(day)
    .bind(day + DAY)
    .execute(&mut *conn)
    .await
    .context("deleting rolled-up probe outcomes")?;
    Ok(())
}
