//! Reading agents for discovery: one row per agent joining its chain state, its document
//! profile and its stored reputation, with every filter, full-text search and keyset
//! pagination done in SQL.

use crate::graphql::cursor::Cursor;
use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, QueryBuilder, Row, Sqlite, SqlitePool};

/// The columns every agent read selects.
const COLUMNS: &str = "a.agent_key, a.chain_id, a.source, a.address, a.registry, a.token_id,
    a.owner, a.operators, a.uri, a.agent_wallet, a.payment_address, a.card_uri AS chain_card_uri,
    a.name AS chain_name, a.description AS chain_description, a.active, a.registered_block,
    a.registered_at, a.last_event_block,
    p.name AS profile_name, p.description AS profile_description, p.card_uri, p.card_status,
    p.card_signature, p.protocol_version, p.x402, p.input_modes, p.output_modes,
    p.registration_verified, p.domain_verified, p.payments AS payment_terms,
    r.score, r.payment_score, r.payment_count, r.unique_payers, r.excluded_payments,
    r.feedback_count, r.feedback_average, r.validation_average, r.rating_average,
    r.as_of_block, r.evaluation";

const JOINS: &str = "
    LEFT JOIN agent_profiles p ON p.agent_key = a.agent_key
    LEFT JOIN agent_reputation r ON r.agent_key = a.agent_key";

/// One agent as discovery reads it.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct AgentRow {
    pub(crate) agent_key: String,
    pub(crate) chain_id: i64,
    pub(crate) source: String,
    pub(crate) address: Option<String>,
    pub(crate) registry: Option<String>,
    pub(crate) token_id: Option<String>,
    pub(crate) owner: String,
    pub(crate) operators: String,
    pub(crate) uri: Option<String>,
    pub(crate) agent_wallet: Option<String>,
    pub(crate) payment_address: Option<String>,
    pub(crate) chain_card_uri: Option<String>,
    pub(crate) chain_name: Option<String>,
    pub(crate) chain_description: Option<String>,
    pub(crate) active: bool,
    pub(crate) registered_block: i64,
    pub(crate) registered_at: i64,
    pub(crate) last_event_block: i64,
    pub(crate) profile_name: Option<String>,
    pub(crate) profile_description: Option<String>,
    pub(crate) card_uri: Option<String>,
    pub(crate) card_status: Option<String>,
    pub(crate) card_signature: Option<String>,
    pub(crate) protocol_version: Option<String>,
    pub(crate) x402: Option<bool>,
    pub(crate) input_modes: Option<String>,
    pub(crate) output_modes: Option<String>,
    pub(crate) registration_verified: Option<bool>,
    pub(crate) domain_verified: Option<bool>,
    pub(crate) payment_terms: Option<String>,
    pub(crate) score: Option<f64>,
    pub(crate) payment_score: Option<f64>,
    pub(crate) payment_count: Option<i64>,
    pub(crate) unique_payers: Option<i64>,
    pub(crate) excluded_payments: Option<i64>,
    pub(crate) feedback_count: Option<i64>,
    pub(crate) feedback_average: Option<f64>,
    pub(crate) validation_average: Option<f64>,
    pub(crate) rating_average: Option<f64>,
    pub(crate) as_of_block: Option<i64>,
    pub(crate) evaluation: Option<String>,
}

/// What to list: the filters of `AgentFilter`, already normalised.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Selection {
    pub(crate) chain_ids: Vec<i64>,
    pub(crate) sources: Vec<&'static str>,
    pub(crate) skill: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) input_mode: Option<String>,
    pub(crate) output_mode: Option<String>,
    pub(crate) x402: Option<bool>,
    pub(crate) signed: Option<bool>,
    pub(crate) active: Option<bool>,
    pub(crate) min_reputation: Option<f64>,
    pub(crate) owner: Option<String>,
    pub(crate) protocol_binding: Option<String>,
    pub(crate) streaming: Option<bool>,
    pub(crate) extension_uri: Option<String>,
    pub(crate) min_price: Option<f64>,
    pub(crate) max_price: Option<f64>,
    /// An FTS5 query (already quoted) when searching: whole words.
    pub(crate) search: Option<String>,
    /// The same with the last word as a prefix, used when no agent has the whole words (see
    /// [`settle_search`]).
    pub(crate) search_as_prefix: Option<String>,
}

impl Selection {
    /// Whether the search is all there is to the selection.
    fn only_search(&self) -> bool {
        let Selection {
            search,
            search_as_prefix,
            ..
        } = self;
        search.is_some()
            && *self
                == Selection {
                    search: search.clone(),
                    search_as_prefix: search_as_prefix.clone(),
                    ..Selection::default()
                }
    }
}

/// Settles which form of the search text `selection` uses: whole words when any agent has
/// them all, else the last word as a prefix (search as you type). Whole words first keeps
/// a search as precise, and as cheap to rank, as its words allow; the choice depends only on
/// the text and the index, so every page of a listing and its count agree.
pub(crate) async fn settle_search(
    pool: &SqlitePool,
    selection: &mut Selection,
) -> sqlx::Result<()> {
    let Some(prefix) = selection.search_as_prefix.take() else {
        return Ok(());
    };
    if let Some(whole) = &selection.search {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM agent_search WHERE agent_search MATCH ? LIMIT 1")
                .bind(whole)
                .fetch_optional(pool)
                .await?;
        if found.is_none() {
            selection.search = Some(prefix);
        }
    }
    Ok(())
}

/// How to order a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Newest,
    Reputation,
    Relevance,
}

/// An agent row and its rank when the list is a search.
pub(crate) struct Listed {
    pub(crate) row: AgentRow,
    pub(crate) rank: Option<f64>,
}

/// One agent by key.
pub(crate) async fn by_key(pool: &SqlitePool, key: &str) -> sqlx::Result<Option<AgentRow>> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {COLUMNS} FROM agents a{JOINS} WHERE a.agent_key = "
    ));
    query.push_bind(key);
    query.build_query_as().fetch_optional(pool).await
}

/// Agent `key` if `selection` matches it.
pub(crate) async fn matching(
    pool: &SqlitePool,
    selection: &Selection,
    key: &str,
) -> sqlx::Result<Option<AgentRow>> {
    let mut query = QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM agents a{JOINS}"));
    push_search_join(&mut query, selection);
    push_filters(&mut query, selection);
    query.push(" AND a.agent_key = ");
    query.push_bind(key.to_string());
    query.build_query_as().fetch_optional(pool).await
}

/// Up to `limit` agents of `selection` in `order`, after `after`. The table the order comes
/// from drives the query (the search hits, the reputation index, the newest-first index), so a
/// page reads about as many rows as it returns plus those the filters skip.
pub(crate) async fn list(
    pool: &SqlitePool,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    limit: i64,
) -> sqlx::Result<Vec<Listed>> {
    list_planned(pool, selection, order, after, limit, true).await
}

/// [`list`], walking the order's index only when `may_walk` (the tests compare both plans).
async fn list_planned(
    pool: &SqlitePool,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    limit: i64,
    may_walk: bool,
) -> sqlx::Result<Vec<Listed>> {
    // With a skill or tag most agents have, walking the order's index and checking each row
    // beats collecting every agent with the term and sorting them; with a rarer one it is the
    // reverse. The walk reads about as many rows as the terms' share of agents says a page
    // needs, four times over: when that fills the page the page is right (those rows come first in
    // the order); when it does not, the other filters were too selective for a walk and the
    // matches are collected instead.
    let walkable = may_walk && selection.search.is_none() && order != Order::Relevance;
    let budget = match walkable {
        true => walk_budget(pool, selection, limit).await?,
        false => None,
    };
    if let Some(budget) = budget {
        let bound = walk_bound(pool, selection, order, after, budget).await?;
        let walked = fetch(
            list_query(selection, order, after, limit, Plan::Walk(bound)),
            pool,
        )
        .await?;
        if walked.len() as i64 >= limit || bound.is_none() {
            return Ok(walked);
        }
    }
    fetch(
        list_query(selection, order, after, limit, Plan::Collect),
        pool,
    )
    .await
}

/// How a list query finds its rows (see [`list`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Plan {
    /// The order's index, each row checked against the filters, down to the bound if any.
    Walk(Option<Bound>),
    /// Every match (or every search hit), then sorted.
    Collect,
}

/// Where a walk stops: the order's value a budget of rows down the index.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    Score(f64),
    Block(i64),
}

/// The value of the order's key `budget` rows after `after` in the order's index (ties at
/// the bound are read too); `None` when fewer rows are left (then the walk reads them all, and
/// its answer is complete).
async fn walk_bound(
    pool: &SqlitePool,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    budget: i64,
) -> sqlx::Result<Option<Bound>> {
    let mut query = QueryBuilder::<Sqlite>::new("");
    match (order, after) {
        (Order::Reputation, after) => {
            query.push(
                "SELECT score FROM agent_reputation INDEXED BY agent_reputation_score WHERE 1",
            );
            if let Some(min) = selection.min_reputation {
                query.push(" AND score >= ");
                query.push_bind(min);
            }
            if let Some(Cursor::Reputation { s, k }) = after {
                query.push(" AND (score < ");
                query.push_bind(*s);
                query.push(" OR (score = ");
                query.push_bind(*s);
                query.push(" AND agent_key > ");
                query.push_bind(k.clone());
                query.push("))");
            }
            query.push(" ORDER BY score DESC, agent_key");
        }
        (_, after) => {
            query.push("SELECT registered_block FROM agents INDEXED BY agents_newest WHERE 1");
            if let Some(Cursor::Newest { b, k }) = after {
                query.push(" AND (registered_block < ");
                query.push_bind(*b);
                query.push(" OR (registered_block = ");
                query.push_bind(*b);
                query.push(" AND agent_key > ");
                query.push_bind(k.clone());
                query.push("))");
            }
            query.push(" ORDER BY registered_block DESC, agent_key");
        }
    }
    query.push(" LIMIT 1 OFFSET ");
    query.push_bind(budget);
    let row = query.build().fetch_optional(pool).await?;
    row.map(|row| {
        Ok(if order == Order::Reputation {
            Bound::Score(row.try_get(0)?)
        } else {
            Bound::Block(row.try_get(0)?)
        })
    })
    .transpose()
}

async fn fetch(
    mut query: QueryBuilder<'_, Sqlite>,
    pool: &SqlitePool,
) -> sqlx::Result<Vec<Listed>> {
    let rows = query.build().fetch_all(pool).await?;
    rows.iter()
        .map(|row: &SqliteRow| {
            Ok(Listed {
                row: AgentRow::from_row(row)?,
                rank: row.try_get("rank")?,
            })
        })
        .collect()
}

fn list_query<'a>(
    selection: &'a Selection,
    order: Order,
    after: Option<&'a Cursor>,
    limit: i64,
    plan: Plan,
) -> QueryBuilder<'a, Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new("");
    // A plain search (no other filter, relevance order) is ranked and cut inside the full-text
    // index, so only the page's rows are joined.
    let plain_search = order == Order::Relevance && selection.only_search();
    if let Some(search) = &selection.search {
        query.push(
            "WITH s AS MATERIALIZED (SELECT agent_key, bm25(agent_search) AS rank FROM agent_search
                WHERE agent_search MATCH ",
        );
        query.push_bind(search.clone());
        if plain_search {
            if let Some(Cursor::Relevance { r, k }) = after {
                query.push(" AND (bm25(agent_search) > ");
                query.push_bind(*r);
                query.push(" OR (bm25(agent_search) = ");
                query.push_bind(*r);
                query.push(" AND agent_key > ");
                query.push_bind(k.clone());
                query.push("))");
            }
            query.push(" ORDER BY rank, agent_key LIMIT ");
            query.push_bind(limit);
        }
        query.push(") ");
    }
    let rank = if selection.search.is_some() {
        "s.rank"
    } else {
        "NULL"
    };
    query.push(format!("SELECT {COLUMNS}, {rank} AS rank FROM "));
    let walk = matches!(plan, Plan::Walk(_));
    match (selection.search.is_some(), order, walk) {
        (true, ..) => query.push("s CROSS JOIN agents a ON a.agent_key = s.agent_key"),
        (false, Order::Reputation, true) => query.push(
            "agent_reputation r INDEXED BY agent_reputation_score
             CROSS JOIN agents a ON a.agent_key = r.agent_key",
        ),
        (false, Order::Reputation, false) => {
            query.push("agent_reputation r CROSS JOIN agents a ON a.agent_key = r.agent_key")
        }
        (false, _, true) => query.push("agents a INDEXED BY agents_newest"),
        (false, ..) => query.push("agents a"),
    };
    query.push(" LEFT JOIN agent_profiles p ON p.agent_key = a.agent_key");
    let reputation_drives = order == Order::Reputation && selection.search.is_none();
    if !reputation_drives {
        query.push(" LEFT JOIN agent_reputation r ON r.agent_key = a.agent_key");
    }
    push_filters_with(&mut query, selection, walk);
    // Bare column comparisons on the walked index's key: they end the walk.
    match plan {
        Plan::Walk(Some(Bound::Score(bound))) => {
            query.push(" AND r.score >= ");
            query.push_bind(bound);
        }
        Plan::Walk(Some(Bound::Block(bound))) => {
            query.push(" AND a.registered_block >= ");
            query.push_bind(bound);
        }
        _ => {}
    }
    if let (true, Some(min)) = (reputation_drives, selection.min_reputation) {
        query.push(" AND r.score >= ");
        query.push_bind(min);
    }
    match (order, after) {
        (Order::Newest, Some(Cursor::Newest { b, k })) => {
            query.push(" AND (a.registered_block < ");
            query.push_bind(*b);
            query.push(" OR (a.registered_block = ");
            query.push_bind(*b);
            query.push(" AND a.agent_key > ");
            query.push_bind(k.clone());
            query.push("))");
        }
        (Order::Reputation, Some(Cursor::Reputation { s, k })) => {
            query.push(" AND (coalesce(r.score, 0) < ");
            query.push_bind(*s);
            query.push(" OR (coalesce(r.score, 0) = ");
            query.push_bind(*s);
            query.push(" AND a.agent_key > ");
            query.push_bind(k.clone());
            query.push("))");
        }
        (Order::Relevance, Some(Cursor::Relevance { r, k })) => {
            query.push(" AND (s.rank > ");
            query.push_bind(*r);
            query.push(" OR (s.rank = ");
            query.push_bind(*r);
            query.push(" AND a.agent_key > ");
            query.push_bind(k.clone());
            query.push("))");
        }
        _ => {}
    }
    query.push(match (order, reputation_drives) {
        (Order::Newest, _) => " ORDER BY a.registered_block DESC, a.agent_key",
        (Order::Reputation, false) => " ORDER BY coalesce(r.score, 0) DESC, a.agent_key",
        (Order::Reputation, true) => " ORDER BY r.score DESC, r.agent_key",
        (Order::Relevance, _) => " ORDER BY s.rank, a.agent_key",
    });
    query.push(" LIMIT ");
    query.push_bind(limit);
    query
}

/// How many agents `selection` matches.
pub(crate) async fn count(pool: &SqlitePool, selection: &Selection) -> sqlx::Result<i64> {
    let mut query = QueryBuilder::<Sqlite>::new("");
    match &selection.search {
        Some(search) => {
            query.push(
                "WITH s AS MATERIALIZED (SELECT agent_key FROM agent_search WHERE agent_search MATCH ",
            );
            query.push_bind(search.clone());
            query.push(format!(
                ") SELECT count(*) FROM s CROSS JOIN agents a ON a.agent_key = s.agent_key{JOINS}"
            ));
        }
        None => {
            query.push(format!("SELECT count(*) FROM agents a{JOINS}"));
        }
    }
    push_filters(&mut query, selection);
    query.build_query_scalar().fetch_one(pool).await
}

fn push_search_join(query: &mut QueryBuilder<'_, Sqlite>, selection: &Selection) {
    if let Some(search) = &selection.search {
        query.push(
            " JOIN (SELECT agent_key, bm25(agent_search) AS rank FROM agent_search
                    WHERE agent_search MATCH ",
        );
        query.push_bind(search.clone());
        query.push(") s ON s.agent_key = a.agent_key");
    }
}

/// Agents counted per term at most when estimating a walk (a larger share walks anyway).
const TERM_COUNT_CAP: i64 = 20_000;
/// Rows a walk reads at least and at most.
const WALK_ROWS: (i64, i64) = (2_000, 20_000);

/// How many rows of the order's index to walk for a page of `limit`: four times what the share
/// of agents with every asked skill and tag (taken as independent) says it takes, as other
/// filters skip rows too. `None` when the
/// selection asks for no term, or when collecting the term's agents reads fewer rows.
async fn walk_budget(
    pool: &SqlitePool,
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
    // Agent rows are never deleted but by a reorg, so the largest rowid is about their number.
    let agents: i64 = sqlx::query_scalar("SELECT coalesce(max(rowid), 0) FROM agents")
        .fetch_one(pool)
        .await?;
    let mut share = 1.0;
    let mut fewest = i64::MAX;
    for (term, kind) in terms {
        let with_term: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT 1 FROM agent_terms WHERE term = ?
               AND (? = 'skill' OR kind = 'tag') LIMIT ?)",
        )
        .bind(&term)
        .bind(kind)
        .bind(TERM_COUNT_CAP)
        .fetch_one(pool)
        .await?;
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

/// Appends ` WHERE …` for every filter of `selection` (always at least `WHERE 1`).
fn push_filters(query: &mut QueryBuilder<'_, Sqlite>, selection: &Selection) {
    push_filters_with(query, selection, false);
}

/// As [`push_filters`]; `checked_terms` keeps the planner from driving the query by the skill
/// and tag lookups (they are then checked for each row the order's index yields).
fn push_filters_with(
    query: &mut QueryBuilder<'_, Sqlite>,
    selection: &Selection,
    checked_terms: bool,
) {
    query.push(" WHERE 1");
    if !selection.chain_ids.is_empty() {
        query.push(" AND a.chain_id IN (");
        let mut list = query.separated(", ");
        for id in &selection.chain_ids {
            list.push_bind(*id);
        }
        query.push(")");
    }
    if !selection.sources.is_empty() {
        query.push(" AND a.source IN (");
        let mut list = query.separated(", ");
        for source in &selection.sources {
            list.push_bind(*source);
        }
        query.push(")");
    }
    let terms = selection
        .skill
        .iter()
        .map(|skill| (skill, "'skill', 'tag'"))
        .chain(selection.tags.iter().map(|tag| (tag, "'tag'")));
    for (term, kinds) in terms {
        // Checked row by row: one probe of the (agent, term) index per candidate. Otherwise the
        // agents with the term are listed first and drive the query.
        query.push(if checked_terms {
            format!(
                " AND EXISTS (SELECT 1 FROM agent_terms t WHERE t.agent_key = a.agent_key
                   AND t.kind IN ({kinds}) AND t.term = "
            )
        } else {
            format!(
                " AND a.agent_key IN (SELECT agent_key FROM agent_terms WHERE kind IN ({kinds})
                   AND term = "
            )
        });
        query.push_bind(term.to_lowercase());
        query.push(")");
    }
    for (column, mode) in [
        ("p.input_modes", &selection.input_mode),
        ("p.output_modes", &selection.output_mode),
    ] {
        if let Some(mode) = mode {
            query.push(format!(
                " AND EXISTS (SELECT 1 FROM json_each({column}) WHERE lower(value) = "
            ));
            query.push_bind(mode.to_lowercase());
            query.push(")");
        }
    }
    if let Some(x402) = selection.x402 {
        query.push(" AND coalesce(p.x402, 0) = ");
        query.push_bind(x402);
    }
    if let Some(signed) = selection.signed {
        query.push(if signed {
            " AND p.card_signature = 'valid'"
        } else {
            " AND coalesce(p.card_signature, '') <> 'valid'"
        });
    }
    if let Some(active) = selection.active {
        query.push(" AND a.active = ");
        query.push_bind(active);
    }
    if let Some(min) = selection.min_reputation {
        query.push(" AND coalesce(r.score, 0) >= ");
        query.push_bind(min);
    }
    if let Some(owner) = &selection.owner {
        query.push(" AND a.owner = ");
        query.push_bind(owner.to_lowercase());
    }
    push_card_filters(query, selection);
    for (bound, compare) in [(selection.min_price, ">="), (selection.max_price, "<=")] {
        if let Some(bound) = bound {
            query.push(format!(
                " AND EXISTS (SELECT 1 FROM json_each(p.payments) t
                   WHERE CAST(json_extract(t.value, '$.amount') AS REAL) {compare} "
            ));
            query.push_bind(bound);
            query.push(" AND json_extract(t.value, '$.amount') GLOB '[0-9]*')");
        }
    }
}

/// Filters on what an agent's card declares: interfaces, streaming, extensions. They look at
/// the card discovery shows for the agent (`agent_profiles.card_uri`: the off-chain card, or
/// the contract's own when that one is missing or fails its anchored hash).
fn push_card_filters(query: &mut QueryBuilder<'_, Sqlite>, selection: &Selection) {
    const CARDS: &str = " AND EXISTS (SELECT 1 FROM agent_documents l
        JOIN documents d ON d.uri = l.uri AND d.expect = l.expect";
    const OF_AGENT: &str = " WHERE l.agent_key = a.agent_key AND l.uri = p.card_uri
        AND d.kind = 'card' AND d.status = 'ok'";
    if let Some(binding) = &selection.protocol_binding {
        query.push(format!(
            "{CARDS}, json_each(d.projection, '$.interfaces') i{OF_AGENT}
               AND upper(json_extract(i.value, '$.binding')) = "
        ));
        query.push_bind(binding.to_uppercase());
        query.push(")");
    }
    if let Some(streaming) = selection.streaming {
        query.push(format!(
            "{CARDS}{OF_AGENT} AND coalesce(json_extract(d.projection, '$.capabilities.streaming'), 0) = "
        ));
        query.push_bind(streaming);
        query.push(")");
    }
    if let Some(uri) = &selection.extension_uri {
        query.push(format!(
            "{CARDS}, json_each(d.projection, '$.capabilities.extensions') e{OF_AGENT}
               AND json_extract(e.value, '$.uri') = "
        ));
        query.push_bind(uri.clone());
        query.push(")");
    }
}

#[cfg(test)]
#[path = "agents_plans_test.rs"]
mod plans_test;
