//! How an agent list finds its rows: walking the order's index (reputation or newest) down to
//! a bound sized from how common the asked skills and tags are, or collecting every match and
//! sorting it (see `agents::list`).

use super::agent_filters::push_after;
use super::cursor::Cursor;
use super::selection::{Order, Selection};
use crate::term_counts::{Known, TermCounts};
use agentindex_indexer::schema::{agent_reputation, agent_terms, agents};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder, Row};
use std::time::Instant;

/// How a list query finds its rows (see [`list`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Plan {
    /// The order's index, each row checked against the filters, down to the bound if any.
    Walk(Option<Bound>),
    /// Every match (or every search hit), then sorted.
    Collect,
}

/// Where a walk stops: the order's value a budget of rows down the index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Bound {
    Score(f64),
    Block(i64),
}

/// The value of the order's key `budget` rows after `after` in the order's index (ties at
/// the bound are read too); `None` when fewer rows are left (then the walk reads them all, and
/// its answer is complete).
pub(super) async fn walk_bound(
    pool: &AnyPool,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    budget: i64,
) -> sqlx::Result<Option<Bound>> {
    let dialect = Dialect::of_pool(pool);
    let (table, _, index) = walked_index(order);
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {} FROM {table}{}",
        order_key(order),
        dialect.index_hint(index)
    ));
    push_index_range(&mut query, order, None, after, selection);
    query.push(" LIMIT 1 OFFSET ");
    query.push_bind(budget);
    let row = dialect.portable(query).build().fetch_optional(pool).await?;
    row.map(|row| {
        Ok(if order == Order::Reputation {
            Bound::Score(row.try_get(0)?)
        } else {
            Bound::Block(row.try_get(0)?)
        })
    })
    .transpose()
}

/// The table a walk reads (its name and alias in agent reads) and the order's index on it.
fn walked_index(order: Order) -> (&'static str, &'static str, &'static str) {
    match order {
        Order::Reputation => (agent_reputation::NAME, "r", "agent_reputation_score"),
        _ => (agents::NAME, "a", "agents_newest"),
    }
}

/// The column the walked index orders by, first.
fn order_key(order: Order) -> &'static str {
    match order {
        Order::Reputation => "score",
        _ => "registered_block",
    }
}

/// Appends ` WHERE … ORDER BY …` over the walked table (`walked_index`): its rows from after
/// the cursor down to `bound` if any (at least `minReputation` in reputation order), in the
/// index's order.
fn push_index_range<'a>(
    query: &mut QueryBuilder<'a, Any>,
    order: Order,
    bound: Option<Bound>,
    after: Option<&'a Cursor>,
    selection: &Selection,
) {
    let key = order_key(order);
    query.push(" WHERE true");
    match bound {
        Some(Bound::Score(bound)) => {
            query.push(" AND score >= ");
            query.push_bind(bound);
        }
        Some(Bound::Block(bound)) => {
            query.push(" AND registered_block >= ");
            query.push_bind(bound);
        }
        None => {}
    }
    match (order, after) {
        (Order::Reputation, after) => {
            if let Some(min) = selection.min_reputation {
                query.push(" AND score >= ");
                query.push_bind(min);
            }
            if let Some(Cursor::Reputation { s, k }) = after {
                push_after(query, key, "<", *s, "agent_key", k);
            }
        }
        (_, Some(Cursor::Newest { b, k })) => push_after(query, key, "<", *b, "agent_key", k),
        _ => {}
    }
    query.push(format!(" ORDER BY {key} DESC, agent_key"));
}

/// The table a walk reads in the order's index (`agent_reputation r` or `agents a`). SQLite is
/// told the index and keeps the joins in the order written. PostgreSQL's planner would join the
/// agents with the asked terms first and sort every match (900 ms a page at 100,000 agents), so
/// there the index is read in a subquery it does not flatten (`OFFSET 0`), from after the
/// cursor down to the bound, and the joins and checks follow it row by row until the page is
/// full (7 ms).
pub(super) fn push_walked<'a>(
    query: &mut QueryBuilder<'a, Any>,
    dialect: Dialect,
    order: Order,
    bound: Option<Bound>,
    after: Option<&'a Cursor>,
    selection: &Selection,
) {
    let (table, alias, index) = walked_index(order);
    if dialect == Dialect::Sqlite {
        query.push(format!("{table} {alias}{}", dialect.index_hint(index)));
        return;
    }
    query.push(format!("(SELECT * FROM {table}"));
    push_index_range(query, order, bound, after, selection);
    query.push(format!(" OFFSET 0) {alias}"));
}

/// Agents counted per term at most when estimating a walk, and at most this share of all
/// agents beside it: a term more agents hold than that is walked with the smallest budget
/// anyway, so a larger count changes nothing.
const TERM_COUNT_CAP: (i64, i64) = (20_000, 5);
/// Rows a walk reads at least and at most.
const WALK_ROWS: (i64, i64) = (2_000, 20_000);

/// How many rows of the order's index to walk for a page of `limit`: four times what the share
/// of agents with every asked skill and tag (taken as independent) says it takes, as other
/// filters skip rows too. `None` when the
/// selection asks for no term, or when collecting the term's agents reads fewer rows. Terms'
/// counts come from `counts` while they are fresh.
pub(super) async fn walk_budget(
    pool: &AnyPool,
    counts: &TermCounts,
    selection: &Selection,
    limit: i64,
) -> sqlx::Result<Option<i64>> {
    let mut terms: Vec<(String, &str)> = Vec::new();
    if let Some(skill) = &selection.skill {
        terms.push((skill.to_lowercase(), "skill"));
    }
    terms.extend(selection.tags.iter().map(|t| (t.to_lowercase(), "tag")));
    if terms.is_empty() {
        return Ok(None);
    }
    // Agent rows are never deleted but by a reorg, so SQLite's largest rowid is about their
    // number. PostgreSQL keeps an estimate from its last ANALYZE or VACUUM (counting reads
    // the whole table: 15 ms at 100,000 agents, each request); a table never analyzed counts.
    let estimate = match Dialect::of_pool(pool) {
        Dialect::Sqlite => format!("SELECT coalesce(max(rowid), 0) FROM {}", agents::NAME),
        Dialect::Postgres => format!(
            "SELECT CASE WHEN reltuples > 0 THEN reltuples::BIGINT
                         ELSE (SELECT count(*) FROM {agents_table}) END
             FROM pg_class WHERE oid = '{agents_table}'::regclass",
            agents_table = agents::NAME
        ),
    };
    let agents: i64 = sqlx::query_scalar(&estimate).fetch_one(pool).await?;
    let mut share = 1.0;
    let mut fewest = i64::MAX;
    let cap = TERM_COUNT_CAP.0.max(agents / TERM_COUNT_CAP.1);
    for (term, kind) in terms {
        let with_term = match counts.look_up(&term, kind, Instant::now()) {
            Known::Count(count) => count,
            Known::CountIt => {
                let count = count_term(pool, &term, kind, cap).await?;
                counts.keep(&term, kind, count, Instant::now());
                count
            }
        };
        fewest = fewest.min(with_term);
        share *= with_term as f64 / agents.max(1) as f64;
    }
    if fewest == 0 {
        return Ok(None);
    }
    let budget = ((4 * limit) as f64 / share.min(1.0)).ceil() as i64;
    let budget = budget.clamp(WALK_ROWS.0, WALK_ROWS.1);
    // A walked row costs a fraction of a collected one (one index step and a probe, against
    // lookups in three tables and a sort).
    Ok((budget < 4 * fewest).then_some(budget))
}

/// How many agents hold `term` of `kind`, `cap` at most.
async fn count_term(pool: &AnyPool, term: &str, kind: &str, cap: i64) -> sqlx::Result<i64> {
    sqlx::query_scalar(&format!(
        "SELECT count(*) FROM (SELECT 1 FROM {} WHERE term = $1
           AND ($2 = 'skill' OR kind = 'tag') LIMIT $3) AS capped",
        agent_terms::NAME
    ))
    .bind(term)
    .bind(kind)
    .bind(cap)
    .fetch_one(pool)
    .await
}
