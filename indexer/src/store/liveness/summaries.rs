//! Each agent's liveness summary (`agent_liveness`) and its MCP tools (`agent_capabilities`),
//! recomputed from its endpoints' state, their raw outcomes of the week, the daily rollups past
//! the raw window and the agent's wallets (`liveness::summary` does the arithmetic).

use crate::liveness::rollup::Sample;
use crate::liveness::summary::{DAY, DailyTotals, EndpointState, summarize};
use crate::liveness::{Kind, Status};
use crate::schema::{
    agent_capabilities, agent_liveness, agents, probe_daily, probe_endpoints, probe_results,
    probe_targets,
};
use crate::store::in_list::push_in;
use crate::store::rows::Rows;
use crate::store::sql::delete_agent_rows;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// Agents summarised per round of queries.
const AGENTS_PER_ROUND: usize = 400;

#[derive(sqlx::FromRow)]
struct EndpointRow {
    agent_key: String,
    kind: String,
    url: String,
    status: String,
    checked_at: Option<i64>,
    last_ok_at: Option<i64>,
    detail: Option<String>,
}

#[derive(sqlx::FromRow)]
struct SampleRow {
    agent_key: String,
    checked_at: i64,
    status: String,
    latency_ms: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct DailyRow {
    agent_key: String,
    probes: i64,
    answered: i64,
}

#[derive(sqlx::FromRow)]
struct WalletRow {
    agent_key: String,
    agent_wallet: Option<String>,
    payment_address: Option<String>,
}

/// Recomputes the summaries of `keys` at `now`.
pub(super) async fn recompute(
    conn: &mut AnyConnection,
    keys: &[String],
    now: i64,
) -> StoreResult<()> {
    for round in keys.chunks(AGENTS_PER_ROUND) {
        recompute_round(conn, round, now).await?;
    }
    Ok(())
}

/// `head` (ending in a comparison) with the start of the week bound, then ` AND t.agent_key`,
/// for [`over_keys`]: a bound value, so the statement's text is the same every time.
fn since_week<'a>(head: String, week: i64) -> QueryBuilder<'a, Any> {
    let mut query = QueryBuilder::new(head);
    query.push_bind(week).push(" AND t.agent_key");
    query
}

/// `query` (ending in `agent_key`) followed by the IN list of `keys`, then `rest`.
fn over_keys<'a>(
    conn: &AnyConnection,
    mut query: QueryBuilder<'a, Any>,
    keys: &'a [String],
    rest: &str,
) -> QueryBuilder<'a, Any> {
    push_in(&mut query, keys.iter().map(String::as_str));
    query.push(rest);
    Dialect::of(conn).portable(query)
}

async fn recompute_round(conn: &mut AnyConnection, keys: &[String], now: i64) -> StoreResult<()> {
    let week = now - 7 * DAY;
    let endpoints: Vec<EndpointRow> = over_keys(
        conn,
        QueryBuilder::new(format!(
            "SELECT t.agent_key, t.kind, t.url, e.status, e.checked_at, e.last_ok_at, e.detail
             FROM {targets} t JOIN {endpoints} e ON e.kind = t.kind AND e.url = t.url
             WHERE t.agent_key",
            targets = probe_targets::NAME,
            endpoints = probe_endpoints::NAME,
        )),
        keys,
        "",
    )
    .build_query_as()
    .fetch_all(&mut *conn)
    .await
    .context("reading the endpoints of agents to summarise")?;
    let samples: Vec<SampleRow> = over_keys(
        conn,
        since_week(
            format!(
                "SELECT t.agent_key, r.checked_at, r.status, r.latency_ms
                FROM {targets} t JOIN {results} r ON r.kind = t.kind AND r.url = t.url
                WHERE r.checked_at >= ",
                targets = probe_targets::NAME,
                results = probe_results::NAME,
            ),
            week,
        ),
        keys,
        "",
    )
    .build_query_as()
    .fetch_all(&mut *conn)
    .await
    .context("reading the probes of agents to summarise")?;
    let daily: Vec<DailyRow> = over_keys(
        conn,
        since_week(
            format!(
                "SELECT t.agent_key, sum(d.probes) AS probes, sum(d.answered) AS answered
                FROM {targets} t JOIN {days} d ON d.kind = t.kind AND d.url = t.url
                WHERE d.day >= ",
                targets = probe_targets::NAME,
                days = probe_daily::NAME,
            ),
            week,
        ),
        keys,
        " GROUP BY t.agent_key",
    )
    .build_query_as()
    .fetch_all(&mut *conn)
    .await
    .context("reading the daily probes of agents to summarise")?;
    let wallets: Vec<WalletRow> = over_keys(
        conn,
        QueryBuilder::new(format!(
            "SELECT agent_key, agent_wallet, payment_address FROM {agents_table} WHERE agent_key",
            agents_table = agents::NAME,
        )),
        keys,
        "",
    )
    .build_query_as()
    .fetch_all(&mut *conn)
    .await
    .context("reading the wallets of agents to summarise")?;

    let mut states: BTreeMap<&str, Vec<EndpointState>> = BTreeMap::new();
    for row in &endpoints {
        let Some(kind) = Kind::parse(&row.kind) else {
            continue;
        };
        states
            .entry(&row.agent_key)
            .or_default()
            .push(EndpointState {
                kind,
                url: row.url.clone(),
                status: Status::parse(&row.status),
                checked_at: row.checked_at,
                last_ok_at: row.last_ok_at,
                detail: row
                    .detail
                    .as_deref()
                    .and_then(|d| serde_json::from_str(d).ok())
                    .unwrap_or_default(),
            });
    }
    let mut sampled: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for row in &samples {
        sampled.entry(&row.agent_key).or_default().push(Sample {
            at: row.checked_at,
            answered: Status::parse(&row.status).is_some_and(Status::answered),
            latency_ms: row.latency_ms,
        });
    }
    let totals: BTreeMap<&str, DailyTotals> = daily
        .iter()
        .map(|row| {
            let totals = DailyTotals {
                probes: row.probes,
                answered: row.answered,
            };
            (row.agent_key.as_str(), totals)
        })
        .collect();
    let owned: BTreeMap<&str, Vec<String>> = wallets
        .iter()
        .map(|row| {
            let wallets = [&row.agent_wallet, &row.payment_address]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
            (row.agent_key.as_str(), wallets)
        })
        .collect();

    let mut rows = Rows::default();
    for key in keys {
        let summary = summarize(
            states
                .get(key.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default(),
            sampled
                .get(key.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default(),
            totals.get(key.as_str()).copied().unwrap_or_default(),
            owned
                .get(key.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default(),
            now,
        );
        let kinds = [
            ("mcp_tool", &summary.mcp_tools),
            ("extended_skill", &summary.extended_skills),
        ];
        for (kind, capabilities) in kinds {
            for capability in capabilities {
                rows.insert(agent_capabilities::Row {
                    agent_key: key.clone(),
                    kind: kind.to_string(),
                    key: capability.key.to_lowercase(),
                    name: capability.name.clone(),
                    description: capability.description.clone(),
                });
            }
        }
        rows.insert(agent_liveness::Row {
            agent_key: key.clone(),
            status: summary.status.to_string(),
            reachable: i64::from(summary.reachable),
            last_seen: summary.last_seen,
            checked_at: summary.checked_at,
            uptime_24h: summary.uptime_24h,
            uptime_7d: summary.uptime_7d,
            latency_p50_ms: summary.latency_p50_ms,
            x402_live: i64::from(summary.x402_live),
            x402_detail: summary.x402_detail.map(|d| d.to_string()),
            extended_card: summary.extended_card,
        });
    }
    delete_agent_rows(
        conn,
        agent_liveness::NAME,
        keys,
        "replacing liveness summaries",
    )
    .await?;
    delete_agent_rows(
        conn,
        agent_capabilities::NAME,
        keys,
        "replacing agents' capabilities",
    )
    .await?;
    rows.flush(conn).await
}
