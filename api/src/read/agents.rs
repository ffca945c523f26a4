//! Reading agents for discovery: one row per agent joining its chain state, its document
//! profile and its stored reputation, with every filter, full-text search and keyset
//! pagination done in SQL.

use super::agent_filters::{push_filters, push_search_join, push_search_keys};
use super::agent_list::{COLUMNS, list_query};
use super::agent_walk::{Plan, plan_walk, walk_stop, walked_to_the_end};
use super::cursor::Cursor;
use super::ranked_search::{self, After, SearchWords, push_ranked_page};
pub(crate) use super::selection::{Order, Selection};
use super::snapshot;
use crate::term_counts::TermCounts;
use agentindex_indexer::schema::{agent_profiles, agent_reputation, agents, search_agents};
use agentindex_indexer::store::Dialect;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, AnyPool, FromRow, QueryBuilder, Row};

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

/// The agents of `keys` that exist, in no particular order, read in one statement (the list
/// padded: [`super::in_list`]). `keys` must not be empty.
pub(crate) async fn by_keys(pool: &AnyPool, keys: &[String]) -> sqlx::Result<Vec<AgentRow>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {COLUMNS} FROM {} a{} WHERE a.agent_key",
        agents::NAME,
        joins()
    ));
    super::in_list(&mut query, keys, "");
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
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
        // The walk and the look at whether it reached its index's end read one snapshot: on
        // PostgreSQL, whose walk stops after a budget of rows, a row removed between the two
        // would pass a walk cut short for the whole answer.
        let mut conn = pool.acquire().await?;
        let mut snapshot = snapshot::begin(&mut conn).await?;
        let stop = walk_stop(&mut snapshot, selection, &walk, after).await?;
        let plan = Plan::Walk(walk.walked.clone(), stop);
        let query = list_query(dialect, selection, order, after, limit, plan);
        let walked = fetch(query, &mut snapshot, false).await?;
        let whole = walked.len() as i64 >= limit
            || walked_to_the_end(&mut snapshot, selection, &walk, after, stop).await?;
        snapshot.commit().await?;
        if whole {
            return Ok(walked);
        }
    }
    let query = list_query(dialect, selection, order, after, limit, Plan::Collect);
    fetch(query, &mut *pool.acquire().await?, true).await
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
    fetch(query, &mut *pool.acquire().await?, false)
        .await
        .map(Some)
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
    conn: &mut AnyConnection,
    planned_each_run: bool,
) -> sqlx::Result<Vec<Listed>> {
    let dialect = Dialect::of(conn);
    let rows = dialect
        .portable(query)
        .build()
        .persistent(!planned_each_run || kept_prepared(dialect))
        .fetch_all(conn)
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

#[cfg(test)]
#[path = "agents_deep_pages_test.rs"]
mod deep_pages_test;
