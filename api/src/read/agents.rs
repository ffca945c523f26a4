//! Reading agents for discovery: one row per agent joining its chain state, its document
//! profile and its stored reputation, with every filter, full-text search and keyset
//! pagination done in SQL.

use super::agent_filters::{
    push_after, push_after_relevance, push_filters, push_filters_with, push_search_join,
    push_search_keys, push_search_rows,
};
use super::agent_walk::{
    Plan, Walked, plan_walk, push_walk_conditions, push_walked, walk_order, walk_stop,
    walked_to_the_end,
};
use super::cursor::Cursor;
use super::ranked_search::{self, After, SearchWords, push_ranked_page};
pub(crate) use super::selection::{Order, Selection};
use crate::term_counts::TermCounts;
use agentindex_indexer::schema::{agent_profiles, agent_reputation, agents, search_agents};
use agentindex_indexer::store::Dialect;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyPool, FromRow, QueryBuilder, Row};

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
    r.as_of_block";

/// The profile and reputation joined to every agent read (`a`, as `p` and `r`).
fn joins() -> String {
    format!(
        "
    LEFT JOIN {} p ON p.agent_key = a.agent_key
    LEFT JOIN {} r ON r.agent_key = a.agent_key",
        agent_profiles::NAME,
        agent_reputation::NAME
    )
}

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
    #[sqlx(try_from = "agentindex_indexer::store::Flag")]
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
    #[sqlx(try_from = "agentindex_indexer::store::MaybeFlag")]
    pub(crate) x402: Option<bool>,
    pub(crate) input_modes: Option<String>,
    pub(crate) output_modes: Option<String>,
    #[sqlx(try_from = "agentindex_indexer::store::MaybeFlag")]
    pub(crate) registration_verified: Option<bool>,
    #[sqlx(try_from = "agentindex_indexer::store::MaybeFlag")]
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
}

/// Settles which form of the search text `selection` uses: whole words when any agent has
/// them all, else the last word as a prefix (search as you type). Whole words first keeps
/// a search as precise, and as cheap to rank, as its words allow; the choice depends only on
/// the text and the index, so every page of a listing and its count agree.
pub(crate) async fn settle_search(pool: &AnyPool, selection: &mut Selection) -> sqlx::Result<()> {
    let Some(prefix) = selection.search_as_prefix.take() else {
        return Ok(());
    };
    if let Some(whole) = &selection.search {
        let dialect = Dialect::of_pool(pool);
        let mut query = QueryBuilder::<Any>::new("");
        push_search_keys(&mut query, dialect, whole);
        query.push(" LIMIT 1");
        let found: Option<String> = dialect
            .portable(query)
            .build_query_scalar()
            .fetch_optional(pool)
            .await?;
        if found.is_none() {
            selection.search = Some(prefix);
        }
    }
    Ok(())
}

/// An agent row and its rank when the list is a search.
pub(crate) struct Listed {
    pub(crate) row: AgentRow,
    pub(crate) rank: Option<f64>,
}

impl Listed {
    /// Where a page that ends at this row ends, in `order`.
    pub(crate) fn cursor(&self, order: Order) -> Cursor {
        let k = self.row.agent_key.clone();
        match order {
            Order::Newest => Cursor::Newest {
                b: self.row.registered_block,
                k,
            },
            Order::Reputation => Cursor::Reputation {
                s: self.row.score.unwrap_or(0.0),
                k,
            },
            Order::Relevance => Cursor::Relevance {
                r: self.rank.unwrap_or(0.0),
                k,
            },
        }
    }
}

/// One agent by key.
pub(crate) async fn by_key(pool: &AnyPool, key: &str) -> sqlx::Result<Option<AgentRow>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {COLUMNS} FROM {} a{} WHERE a.agent_key = ",
        agents::NAME,
        joins()
    ));
    query.push_bind(key);
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_optional(pool)
        .await
}

/// Agent `key` if `selection` matches it.
pub(crate) async fn matching(
    pool: &AnyPool,
    selection: &Selection,
    key: &str,
) -> sqlx::Result<Option<AgentRow>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {COLUMNS} FROM {} a{}",
        agents::NAME,
        joins()
    ));
    push_search_join(&mut query, Dialect::of_pool(pool), selection);
    push_filters(&mut query, Dialect::of_pool(pool), selection);
    query.push(" AND a.agent_key = ");
    query.push_bind(key.to_string());
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_optional(pool)
        .await
}

/// Up to `limit` agents of `selection` in `order`, after `after`. The table the order comes
/// from drives the query (the search hits, the reputation index, the newest-first index), so a
/// page reads about as many rows as it returns plus those the filters skip.
pub(crate) async fn list(
    pool: &AnyPool,
    counts: &TermCounts,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    limit: i64,
) -> sqlx::Result<Vec<Listed>> {
    list_planned(pool, counts, selection, order, after, limit, true).await
}

/// [`list`], walking the order's index only when `may_walk` (the tests compare both plans).
async fn list_planned(
    pool: &AnyPool,
    counts: &TermCounts,
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
    // A plain search's page comes from its words' heaviest postings when they settle it.
    if may_walk
        && let Some(page) = best_of_plain_search(pool, selection, order, after, limit).await?
    {
        return Ok(page);
    }
    let walkable = may_walk && selection.search.is_none() && order != Order::Relevance;
    let walk = match walkable {
        true => plan_walk(pool, counts, selection, order, limit).await?,
        false => None,
    };
    let dialect = Dialect::of_pool(pool);
    if let Some(walk) = walk {
        let stop = walk_stop(pool, selection, &walk, after).await?;
        let plan = Plan::Walk(walk.walked.clone(), stop);
        let query = list_query(dialect, selection, order, after, limit, plan);
        let walked = fetch(query, pool, false).await?;
        if walked.len() as i64 >= limit
            || walked_to_the_end(pool, selection, &walk, after, stop).await?
        {
            return Ok(walked);
        }
    }
    let query = list_query(dialect, selection, order, after, limit, Plan::Collect);
    fetch(query, pool, true).await
}

/// The page of a plain search of whole words in relevance order, ranked from each word's
/// heaviest postings (`ranked_search`); `None` for any other listing, or when the postings
/// would have to be read too deep (every match is ranked instead).
async fn best_of_plain_search(
    pool: &AnyPool,
    selection: &Selection,
    order: Order,
    after: Option<&Cursor>,
    limit: i64,
) -> sqlx::Result<Option<Vec<Listed>>> {
    let (Order::Relevance, Some(search)) = (order, &selection.search) else {
        return Ok(None);
    };
    let words = SearchWords::of(search);
    if !selection.only_search() || words.prefix.is_some() {
        return Ok(None);
    }
    let after = match after {
        Some(Cursor::Relevance { r, k }) => match search_number(pool, k).await? {
            Some(doc) => Some(After {
                score: -r.round() as i64,
                doc,
            }),
            // The agent the last page ended at is gone: every match is ranked instead.
            None => return Ok(None),
        },
        _ => None,
    };
    let Some(best) = ranked_search::best(pool, &words.whole, after, limit).await? else {
        return Ok(None);
    };
    tracing::debug!(
        depth = best.depth,
        "a plain search's page from its words' postings"
    );
    if best.page.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let dialect = Dialect::of_pool(pool);
    let ranked: Vec<(i64, f64)> = best
        .page
        .iter()
        .map(|(doc, score)| (*doc, -(*score as f64)))
        .collect();
    let mut query = QueryBuilder::<Any>::new("WITH v AS (");
    push_ranked_page(&mut query, dialect, &ranked);
    let join = dialect.join_in_order();
    query.push(format!(
        ") SELECT {COLUMNS}, v.rank AS rank FROM v {join} {} d ON d.doc = v.doc
           {join} {} a ON a.agent_key = d.agent_key{}
         ORDER BY v.place",
        search_agents::NAME,
        agents::NAME,
        joins()
    ));
    fetch(query, pool, false).await.map(Some)
}

/// Agent `key`'s number in `search_agents`, if it has one.
async fn search_number(pool: &AnyPool, key: &str) -> sqlx::Result<Option<i64>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT doc FROM {} WHERE agent_key = ",
        search_agents::NAME
    ));
    query.push_bind(key.to_string());
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_scalar()
        .fetch_optional(pool)
        .await
}

/// Whether a statement whose best plan depends on its values (which of its terms is the rarest
/// to start from, how many agents an owner holds) may be kept prepared. On PostgreSQL it is sent
/// unprepared, so it is planned for its values at every run: the read connections let
/// PostgreSQL settle on a plan made for no values after five runs of a kept statement
/// (`store/postgres.rs`), and such a plan would start from whichever term its guesses pick.
fn kept_prepared(dialect: Dialect) -> bool {
    dialect == Dialect::Sqlite
}

/// The agents `query` lists; `planned_each_run` sends it unprepared on PostgreSQL
/// ([`kept_prepared`]).
async fn fetch(
    query: QueryBuilder<'_, Any>,
    pool: &AnyPool,
    planned_each_run: bool,
) -> sqlx::Result<Vec<Listed>> {
    let dialect = Dialect::of_pool(pool);
    let rows = dialect
        .portable(query)
        .build()
        .persistent(!planned_each_run || kept_prepared(dialect))
        .fetch_all(pool)
        .await?;
    rows.iter()
        .map(|row: &AnyRow| {
            Ok(Listed {
                row: AgentRow::from_row(row)?,
                rank: row.try_get("rank")?,
            })
        })
        .collect()
}

fn list_query<'a>(
    dialect: Dialect,
    selection: &'a Selection,
    order: Order,
    after: Option<&'a Cursor>,
    limit: i64,
    plan: Plan,
) -> QueryBuilder<'a, Any> {
    let mut query = QueryBuilder::<Any>::new("");
    // A plain search (no other filter, relevance order) is ranked and cut inside the full-text
    // index, so only the page's rows are joined.
    let plain_search = order == Order::Relevance && selection.only_search();
    if let Some(search) = &selection.search {
        query.push("WITH s AS MATERIALIZED (SELECT agent_key, doc, rank FROM (");
        push_search_rows(&mut query, dialect, search);
        query.push(") ranked WHERE true");
        if plain_search {
            if let Some(Cursor::Relevance { r, k }) = after {
                push_after_relevance(&mut query, "rank", "doc", *r, k);
            }
            query.push(" ORDER BY rank, doc LIMIT ");
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
    let (agents_table, reputation_table) = (agents::NAME, agent_reputation::NAME);
    let join = dialect.join_in_order();
    match (selection.search.is_some(), order, &plan) {
        (true, ..) => {
            query.push(format!(
                "s {join} {agents_table} a ON a.agent_key = s.agent_key"
            ));
        }
        (false, Order::Reputation, Plan::Walk(walked, stop)) => {
            push_walked(&mut query, dialect, walked, *stop, after, selection);
            query.push(format!(
                " {join} {agents_table} a ON a.agent_key = r.agent_key"
            ));
        }
        (false, Order::Reputation, Plan::Collect) => {
            query.push(format!(
                "{reputation_table} r {join} {agents_table} a ON a.agent_key = r.agent_key"
            ));
        }
        (false, _, Plan::Walk(walked, stop)) => {
            push_walked(&mut query, dialect, walked, *stop, after, selection)
        }
        (false, ..) => {
            query.push(format!("{agents_table} a"));
        }
    }
    query.push(format!(
        " LEFT JOIN {} p ON p.agent_key = a.agent_key",
        agent_profiles::NAME
    ));
    let reputation_drives = order == Order::Reputation && selection.search.is_none();
    if !reputation_drives {
        query.push(format!(
            " LEFT JOIN {reputation_table} r ON r.agent_key = a.agent_key"
        ));
    }
    let walked_key = if reputation_drives {
        "r.agent_key"
    } else {
        "a.agent_key"
    };
    match &plan {
        Plan::Walk(walked, stop) => {
            // A term's list needs no check for its own term.
            let checked = match walked {
                Walked::Term(term) => selection.without(term),
                Walked::Everyone(_) => selection.clone(),
            };
            push_filters_with(&mut query, dialect, &checked, Some(walked_key));
            push_walk_conditions(&mut query, dialect, walked, *stop, after, selection);
        }
        Plan::Collect => push_filters_with(&mut query, dialect, selection, None),
    }
    if let (true, Some(min)) = (reputation_drives, selection.min_reputation) {
        query.push(" AND r.score >= ");
        query.push_bind(min);
    }
    match (order, after) {
        (Order::Newest, Some(Cursor::Newest { b, k })) => {
            push_after(&mut query, "a.registered_block", "<", *b, "a.agent_key", k);
        }
        (Order::Reputation, Some(Cursor::Reputation { s, k })) => {
            push_after(
                &mut query,
                "coalesce(r.score, 0)",
                "<",
                *s,
                "a.agent_key",
                k,
            );
        }
        (Order::Relevance, Some(Cursor::Relevance { r, k })) => {
            push_after_relevance(&mut query, "s.rank", "s.doc", *r, k);
        }
        _ => {}
    }
    let walked_order = match &plan {
        Plan::Walk(walked, _) => walk_order(walked),
        Plan::Collect => None,
    };
    query.push(match (order, reputation_drives, walked_order) {
        (_, _, Some(walked_order)) => walked_order,
        (Order::Newest, ..) => " ORDER BY a.registered_block DESC, a.agent_key",
        (Order::Reputation, false, _) => " ORDER BY coalesce(r.score, 0) DESC, a.agent_key",
        (Order::Reputation, true, _) => " ORDER BY r.score DESC, r.agent_key",
        (Order::Relevance, ..) => " ORDER BY s.rank, s.doc",
    });
    query.push(" LIMIT ");
    query.push_bind(limit);
    query
}

/// How many agents `selection` matches.
pub(crate) async fn count(pool: &AnyPool, selection: &Selection) -> sqlx::Result<i64> {
    let dialect = Dialect::of_pool(pool);
    let mut query = QueryBuilder::<Any>::new("");
    match &selection.search {
        Some(search) => {
            query.push("WITH s AS MATERIALIZED (");
            push_search_keys(&mut query, dialect, search);
            query.push(format!(
                ") SELECT count(*) FROM s {} {} a ON a.agent_key = s.agent_key{}",
                dialect.join_in_order(),
                agents::NAME,
                joins()
            ));
        }
        None => {
            query.push(format!(
                "SELECT count(*) FROM {} a{}",
                agents::NAME,
                joins()
            ));
        }
    }
    push_filters(&mut query, dialect, selection);
    dialect
        .portable(query)
        .build_query_scalar()
        .persistent(kept_prepared(dialect))
        .fetch_one(pool)
        .await
}

#[cfg(test)]
#[path = "agents_plans_test.rs"]
mod plans_test;

#[cfg(test)]
#[path = "agents_search_test.rs"]
mod search_test;
