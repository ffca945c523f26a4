//! Aggregates for dashboards: skills and tags with their agent counts, totals per chain and
//! source, daily series of registrations, payments, volume and feedback.

use agentindex_indexer::schema::{
    agent_skills, agent_terms, agents, chain_cursor, feedback, payments, validation_requests,
};
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, AnyPool, QueryBuilder};

/// A value and how many agents have it.
pub(crate) type Counted = (String, i64);

fn push_chains(query: &mut QueryBuilder<'_, Any>, column: &str, chain_ids: &[i64]) {
    if chain_ids.is_empty() {
        return;
    }
    query.push(format!(" AND {column}"));
    push_in(query, chain_ids.iter().copied());
}

/// The most common skill ids (case-folded) with how many agents advertise each.
pub(crate) async fn skills(
    pool: &AnyPool,
    chain_ids: &[i64],
    limit: i64,
) -> sqlx::Result<Vec<Counted>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT lower(k.skill_id) AS v, count(DISTINCT k.agent_key) AS n
         FROM {} k JOIN {} a ON a.agent_key = k.agent_key WHERE true",
        agent_skills::NAME,
        agents::NAME
    ));
    push_chains(&mut query, "a.chain_id", chain_ids);
    query.push(" GROUP BY v ORDER BY n DESC, v LIMIT ");
    query.push_bind(limit);
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await
}

/// The most common tags (of skills, and agents' own) with how many agents carry each.
pub(crate) async fn tags(
    pool: &AnyPool,
    chain_ids: &[i64],
    limit: i64,
) -> sqlx::Result<Vec<Counted>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT t.term AS v, count(*) AS n
         FROM {} t JOIN {} a ON a.agent_key = t.agent_key
         WHERE t.kind = 'tag'",
        agent_terms::NAME,
        agents::NAME,
    ));
    push_chains(&mut query, "a.chain_id", chain_ids);
    query.push(" GROUP BY v ORDER BY n DESC, v LIMIT ");
    query.push_bind(limit);
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await
}

/// Agents per (chain, source).
pub(crate) async fn agents_by_source(pool: &AnyPool) -> sqlx::Result<Vec<(i64, String, i64)>> {
    sqlx::query_as(&format!(
        "SELECT chain_id, source, count(*) FROM {} GROUP BY chain_id, source \
         ORDER BY chain_id, source",
        agents::NAME
    ))
    .fetch_all(pool)
    .await
}

/// One chain's activity, as [`activity`] counts it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct ChainActivity {
    pub(crate) chain_id: i64,
    /// Payments credited to its agents.
    pub(crate) payments: i64,
    /// Feedback given to its agents.
    pub(crate) feedback: i64,
    /// Validations requested for its agents.
    pub(crate) validation_requests: i64,
}

/// Per indexed chain, in chain order: payments credited, feedback given, validation requests.
pub(crate) async fn activity(pool: &AnyPool) -> sqlx::Result<Vec<ChainActivity>> {
    sqlx::query_as(&format!(
        "SELECT c.chain_id,
            (SELECT count(*) FROM {} p WHERE p.chain_id = c.chain_id) AS payments,
            (SELECT count(*) FROM {} f WHERE f.chain_id = c.chain_id) AS feedback,
            (SELECT count(*) FROM {} v WHERE v.chain_id = c.chain_id) AS validation_requests
         FROM {} c ORDER BY c.chain_id",
        payments::NAME,
        feedback::NAME,
        validation_requests::NAME,
        chain_cursor::NAME
    ))
    .fetch_all(pool)
    .await
}

/// What a daily series counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Series {
    Registrations,
    Payments,
    /// Sum of the amounts of one token, in its smallest unit.
    Volume,
    Feedback,
}

/// The newest `days` days with data of `series` on `chain_id`, oldest first, as (UTC date,
/// value). Days are block days: the series ends at the newest indexed data, not today.
pub(crate) async fn daily(
    pool: &AnyPool,
    chain_id: i64,
    series: Series,
    token: Option<&str>,
    days: i64,
) -> sqlx::Result<Vec<(String, f64)>> {
    let (value, from, time) = match series {
        Series::Registrations => ("count(*)", agents::NAME, agents::registered_at),
        Series::Payments => ("count(*)", payments::NAME, payments::timestamp),
        Series::Volume => (
            "sum(CAST(amount AS DOUBLE PRECISION))",
            payments::NAME,
            payments::timestamp,
        ),
        Series::Feedback => ("count(*)", feedback::NAME, feedback::timestamp),
    };
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT day, value FROM (SELECT {} AS day, CAST({value} AS DOUBLE PRECISION) AS value
         FROM {from} WHERE chain_id = ",
        Dialect::of_pool(pool).day(time.name)
    ));
    query.push_bind(chain_id);
    if let (Series::Volume, Some(token)) = (series, token) {
        query.push(" AND token = ");
        query.push_bind(token.to_lowercase());
    }
    query.push(" GROUP BY day ORDER BY day DESC LIMIT ");
    query.push_bind(days);
    query.push(") AS days ORDER BY day");
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await
}
