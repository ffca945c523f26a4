//! How an agent list finds its rows: walking an index in the list's order (the order's own over
//! every agent, or, for a reputation order with a skill or tag, that term's agents best first)
//! down to a bound sized from how common the asked skills and tags are, or collecting every
//! match and sorting it (see `agents::list`).

use super::agent_filters::push_after;
use super::cursor::Cursor;
use super::selection::{Order, Selection, Term};
use crate::term_counts::{Known, TermCounts};
use agentindex_indexer::schema::{agent_reputation, agent_terms, agents};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, AnyPool, QueryBuilder, Row};
use std::time::Instant;

/// How a list query finds its rows (see [`list`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    /// An index in the list's order, each row checked against the filters, until the walk
    /// stops.
    Walk(Walked, Stop),
    /// Every match (or every search hit), then sorted.
    Collect,
}

/// The index a walk reads, in the list's order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Walked {
    /// The order's own index over every agent: `agent_reputation_score` (as `r`) or
    /// `agents_newest` (as `a`).
    Everyone(Order),
    /// One term's agents best reputation first (`agent_terms_score`, as `w`, with each row's
    /// `agent_reputation` as `r`): a page reads about as many rows as it returns, however few
    /// agents hold the term.
    Term(Term),
}

/// A walk worth taking: what it reads, and how many rows of it at most before the matches are
/// collected instead.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Walk {
    pub(super) walked: Walked,
    pub(super) budget: i64,
}

/// Where a walk stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stop {
    /// At the order's value the budget of rows down the walked index, read before the walk
    /// (SQLite, whose walk is the outer query itself); `None` when fewer rows are left.
    AtBound(Option<Bound>),
    /// After the budget of rows, a `LIMIT` of the walk's subquery (PostgreSQL): the walk reads
    /// no more rows than its page needs, and nothing is read ahead of it.
    AfterRows(i64),
}

impl Stop {
    fn bound(self) -> Option<Bound> {
        match self {
            Stop::AtBound(bound) => bound,
            Stop::AfterRows(_) => None,
        }
    }
}

/// Where `walk` stops on `pool`'s database (see [`Stop`]).
pub(super) async fn walk_stop(
    conn: &mut AnyConnection,
    selection: &Selection,
    walk: &Walk,
    after: Option<&Cursor>,
) -> sqlx::Result<Stop> {
    Ok(match Dialect::of(conn) {
        Dialect::Sqlite => Stop::AtBound(walk_bound(conn, selection, walk, after).await?),
        Dialect::Postgres => Stop::AfterRows(walk.budget),
    })
}

/// Whether a walk that stopped at `stop` read every row of its index (so a page it left short
/// is the whole answer), not just its budget.
pub(super) async fn walked_to_the_end(
    conn: &mut AnyConnection,
    selection: &Selection,
    walk: &Walk,
    after: Option<&Cursor>,
    stop: Stop,
) -> sqlx::Result<bool> {
    Ok(match stop {
        Stop::AtBound(bound) => bound.is_none(),
        Stop::AfterRows(_) => walk_bound(conn, selection, walk, after).await?.is_none(),
    })
}

/// The order's value a budget of rows down the walked index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Bound {
    Score(f64),
    Block(i64),
}

/// The value of the order's key `budget` rows after `after` in the walked index (ties at the
/// bound are read too); `None` when fewer rows are left (then the walk reads them all, and its
/// answer is complete).
async fn walk_bound(
    conn: &mut AnyConnection,
    selection: &Selection,
    walk: &Walk,
    after: Option<&Cursor>,
) -> sqlx::Result<Option<Bound>> {
    let dialect = Dialect::of(conn);
    let mut query = QueryBuilder::<Any>::new("");
    let order = match &walk.walked {
        Walked::Everyone(order) => {
            let (table, _, index) = order_index(*order);
            query.push(format!(
                "SELECT {} FROM {table}{}",
                order_key(*order),
                dialect.index_hint(index)
            ));
            push_index_range(&mut query, *order, None, after, selection);
            *order
        }
        Walked::Term(term) => {
            query.push(format!("SELECT w.score FROM {}", term_list(dialect)));
            query.push(" WHERE true");
            push_term_range(&mut query, term, None, after, selection, false);
            query.push(TERM_ORDER);
            Order::Reputation
        }
    };
    query.push(" LIMIT 1 OFFSET ");
    query.push_bind(walk.budget);
    let row = dialect.portable(query).build().fetch_optional(conn).await?;
    row.map(|row| {
        Ok(if order == Order::Reputation {
            Bound::Score(row.try_get(0)?)
        } else {
            Bound::Block(row.try_get(0)?)
        })
    })
    .transpose()
}

/// The table a walk over every agent reads (its name and alias in agent reads) and the order's
/// index on it.
fn order_index(order: Order) -> (&'static str, &'static str, &'static str) {
    match order {
        Order::Reputation => (agent_reputation::NAME, "r", "agent_reputation_score"),
        _ => (agents::NAME, "a", "agents_newest"),
    }
}

/// The column the order's own index orders by, first.
fn order_key(order: Order) -> &'static str {
    match order {
        Order::Reputation => "score",
        _ => "registered_block",
    }
}

/// `agent_terms` as `w`, read through its per-term reputation index.
fn term_list(dialect: Dialect) -> String {
    format!(
        "{} w{}",
        agent_terms::NAME,
        dialect.index_hint("agent_terms_score")
    )
}

/// Appends ` WHERE … ORDER BY …` over the order's own table (`order_index`): its rows from
/// after the cursor down to `bound` if any (at least `minReputation` in reputation order), in
/// the index's order.
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
                push_after(query, key, *s, "agent_key", k);
            }
        }
        (_, Some(Cursor::Newest { b, k })) => push_after(query, key, *b, "agent_key", k),
        _ => {}
    }
    query.push(format!(" ORDER BY {key} DESC, agent_key DESC"));
}

/// Appends ` AND …` over `w`, a term's rows of `agent_terms`: the agents with `term` that
/// have a score, from after the cursor down to `bound` if any (and at least `minReputation`),
/// with `each_agent_once` each agent once (a skill filter matches a skill id and a tag of one
/// agent both: its tag row is kept; a bound, only an estimate, counts both and saves the
/// probe). Read in [`TERM_ORDER`].
fn push_term_range<'a>(
    query: &mut QueryBuilder<'a, Any>,
    term: &Term,
    bound: Option<f64>,
    after: Option<&'a Cursor>,
    selection: &Selection,
    each_agent_once: bool,
) {
    query.push(" AND w.term = ");
    query.push_bind(term.text.clone());
    query.push(format!(" AND w.kind IN ({})", term.kinds()));
    if each_agent_once && term.kind == "skill" {
        query.push(format!(
            " AND (w.kind = 'tag' OR NOT EXISTS (SELECT 1 FROM {} d
               WHERE d.term = w.term AND d.kind = 'tag' AND d.agent_key = w.agent_key))",
            agent_terms::NAME
        ));
    }
    query.push(" AND w.score IS NOT NULL");
    for floor in [bound, selection.min_reputation].into_iter().flatten() {
        query.push(" AND w.score >= ");
        query.push_bind(floor);
    }
    if let Some(Cursor::Reputation { s, k }) = after {
        push_after(query, "w.score", *s, "w.agent_key", k);
    }
}

/// The order of a term's list, as its index keeps it.
const TERM_ORDER: &str = " ORDER BY w.score DESC, w.agent_key DESC";

/// Appends the table a walk reads in its order: `agent_reputation r` or `agents a` over
/// every agent, or a term's `agent_terms w` joined to its agents' `agent_reputation r`. SQLite
/// is told the index and keeps the joins in the order written (a term's range is then part of
/// the outer `WHERE`, see [`push_walk_conditions`]). PostgreSQL's planner would join the
/// agents with the asked terms first and sort every match (900 ms a page at 100,000 agents),
/// so there the index is read in a subquery it does not flatten (`OFFSET 0`), from after the
/// cursor down to the bound, and the joins and checks follow it row by row until the page is
/// full (7 ms).
pub(super) fn push_walked<'a>(
    query: &mut QueryBuilder<'a, Any>,
    dialect: Dialect,
    walked: &Walked,
    stop: Stop,
    after: Option<&'a Cursor>,
    selection: &Selection,
) {
    let bound = stop.bound();
    match walked {
        Walked::Everyone(order) => {
            let (table, alias, index) = order_index(*order);
            if dialect == Dialect::Sqlite {
                query.push(format!("{table} {alias}{}", dialect.index_hint(index)));
                return;
            }
            query.push(format!("(SELECT * FROM {table}"));
            push_index_range(query, *order, bound, after, selection);
            push_subquery_end(query, stop);
            query.push(format!(") {alias}"));
        }
        Walked::Term(term) => {
            if dialect == Dialect::Sqlite {
                query.push(term_list(dialect));
            } else {
                query.push(format!(
                    "(SELECT w.agent_key, w.score FROM {} WHERE true",
                    term_list(dialect)
                ));
                push_term_range(query, term, score_of(bound), after, selection, true);
                query.push(TERM_ORDER);
                push_subquery_end(query, stop);
                query.push(") w");
            }
            // A term row whose copy of the score lags its agent's is left out rather than
            // read out of order (which would break the pages' order and their cursors): two
            // indexers writing one PostgreSQL database can commit a profile and a rescore of
            // one agent at once, each trigger missing the other's rows, until the agent's score
            // or profile is written again.
            query.push(format!(
                " {} {} r ON r.agent_key = w.agent_key AND r.score = w.score",
                dialect.join_in_order(),
                agent_reputation::NAME
            ));
        }
    }
}

/// Ends a walk's subquery on PostgreSQL: after its budget of rows, or with `OFFSET 0` (which
/// keeps the planner from flattening it) when a bound ends it.
fn push_subquery_end(query: &mut QueryBuilder<'_, Any>, stop: Stop) {
    match stop {
        Stop::AfterRows(rows) => {
            query.push(" LIMIT ");
            query.push_bind(rows);
        }
        Stop::AtBound(_) => {
            query.push(" OFFSET 0");
        }
    }
}

/// Appends the walk's own conditions to the outer `WHERE`: where it stops (the bound, on the
/// walked index's key) and, on SQLite, a term's range.
pub(super) fn push_walk_conditions<'a>(
    query: &mut QueryBuilder<'a, Any>,
    dialect: Dialect,
    walked: &Walked,
    stop: Stop,
    after: Option<&'a Cursor>,
    selection: &Selection,
) {
    match (walked, stop.bound()) {
        (Walked::Term(term), bound) if dialect == Dialect::Sqlite => {
            push_term_range(query, term, score_of(bound), after, selection, true);
        }
        (Walked::Term(_), _) => {}
        (_, Some(Bound::Score(bound))) => {
            query.push(" AND r.score >= ");
            query.push_bind(bound);
        }
        (_, Some(Bound::Block(bound))) => {
            query.push(" AND a.registered_block >= ");
            query.push_bind(bound);
        }
        (_, None) => {}
    }
}

/// The `ORDER BY` of a walk over a term's list, `None` for the order's own index (whose
/// `ORDER BY` is the list's).
pub(super) fn walk_order(walked: &Walked) -> Option<&'static str> {
    match walked {
        Walked::Term(_) => Some(TERM_ORDER),
        Walked::Everyone(_) => None,
    }
}

fn score_of(bound: Option<Bound>) -> Option<f64> {
    match bound {
        Some(Bound::Score(score)) => Some(score),
        _ => None,
    }
}

/// Agents counted per term at most when estimating a walk, and at most this share of all
/// agents beside it: a term more agents hold than that is walked with the smallest budget
/// anyway, so a larger count changes nothing.
const TERM_COUNT_CAP: (i64, i64) = (20_000, 5);
/// Rows a walk reads at least and at most.
const WALK_ROWS: (i64, i64) = (2_000, 20_000);

/// Whether to walk for a page of `limit` in `order`, what, and how many rows at most: four
/// times what the share of agents with every asked skill and tag the walk does not read the
/// list of (taken as independent) says it takes, as other filters skip rows too. In reputation
/// order the list of the asked term fewest agents hold is walked; in newest order the order's
/// own index, unless collecting the rarest term's agents reads fewer rows. `None` when the
/// selection asks for no term. Terms' counts come from `counts` while they are fresh.
pub(super) async fn plan_walk(
    pool: &AnyPool,
    counts: &TermCounts,
    selection: &Selection,
    order: Order,
    limit: i64,
) -> sqlx::Result<Option<Walk>> {
    let terms = selection.terms();
    if terms.is_empty() {
        return Ok(None);
    }
    if let (Order::Reputation, [term]) = (order, terms.as_slice()) {
        // Every row of the term's list holds the term: nothing to count.
        return Ok(Some(Walk {
            walked: Walked::Term(term.clone()),
            budget: walk_rows(limit, 1.0),
        }));
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
    let cap = TERM_COUNT_CAP.0.max(agents / TERM_COUNT_CAP.1);
    let mut held = Vec::with_capacity(terms.len());
    for term in &terms {
        let with_term = match counts.look_up(&term.text, term.kind, Instant::now()) {
            Known::Count(count) => count,
            Known::CountIt => {
                let count = count_term(pool, &term.text, term.kind, cap).await?;
                counts.keep(&term.text, term.kind, count, Instant::now());
                count
            }
        };
        held.push(with_term);
    }
    let (rarest, fewest) = held
        .iter()
        .copied()
        .enumerate()
        .min_by_key(|(_, count)| *count)
        .expect("at least one term");
    if fewest == 0 {
        return Ok(None);
    }
    let share_of = |skip: Option<usize>| {
        held.iter()
            .enumerate()
            .filter(|(at, _)| Some(*at) != skip)
            .map(|(_, count)| *count as f64 / agents.max(1) as f64)
            .product::<f64>()
    };
    if order == Order::Reputation {
        // The term's list holds only agents with it: never more rows than collecting them.
        return Ok(Some(Walk {
            walked: Walked::Term(terms[rarest].clone()),
            budget: walk_rows(limit, share_of(Some(rarest))),
        }));
    }
    let budget = walk_rows(limit, share_of(None));
    // A walked row costs a fraction of a collected one (one index step and a probe, against
    // lookups in three tables and a sort).
    Ok((budget < 4 * fewest).then_some(Walk {
        walked: Walked::Everyone(order),
        budget,
    }))
}

/// Rows to walk for a page of `limit` when `share` of the walked rows have the terms not yet
/// checked: four times what that share says, as other filters skip rows too.
fn walk_rows(limit: i64, share: f64) -> i64 {
    let budget = ((4 * limit) as f64 / share.min(1.0)).ceil() as i64;
    budget.clamp(WALK_ROWS.0, WALK_ROWS.1)
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
