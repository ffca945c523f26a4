//! The paid resources agents declare, for x402 Bazaar discovery (`crate::discovery`): a page of
//! (agent, resource) pairs matching the filters, each with every term it declares and what is
//! known of the agent and of the resource's last probe.

use super::in_list;
use agentindex_indexer::schema::{
    agent_documents, agent_profiles, agent_registrations, agent_reputation, agent_skills,
    agent_x402_terms, agents, documents, probe_endpoints,
};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// Which terms count: a resource is listed when one of its terms matches every filter given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TermFilter {
    /// `Some(true)`: terms naming their resource URL (`http`); `Some(false)`: terms of an
    /// agent's card without one (`a2a`, the resource being the card).
    pub(crate) with_resource: Option<bool>,
    /// The recipient, as [`agentindex_indexer::documents::payments::recipient`] keeps it.
    pub(crate) pay_to: Option<String>,
    /// Every spelling of the network wanted.
    pub(crate) networks: Option<Vec<String>>,
    /// Only ERC-8004 agents.
    pub(crate) erc8004: bool,
    /// Nothing can match (a scheme or extension no term has).
    pub(crate) none: bool,
}

/// One declared term.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct TermRow {
    pub(crate) agent_key: String,
    /// The resource it lists under: its own, else the agent's card.
    pub(crate) listed: String,
    /// Whether it named its resource itself.
    pub(crate) named: i64,
    pub(crate) source: String,
    pub(crate) network: Option<String>,
    pub(crate) asset: Option<String>,
    pub(crate) amount: Option<String>,
    pub(crate) pay_to: Option<String>,
    pub(crate) skill: Option<String>,
}

/// What a listing shows of an agent.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct AgentFacts {
    pub(crate) agent_key: String,
    pub(crate) chain_id: i64,
    pub(crate) source: String,
    pub(crate) registry: Option<String>,
    pub(crate) token_id: Option<String>,
    pub(crate) owner: String,
    pub(crate) agent_wallet: Option<String>,
    pub(crate) payment_address: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) image: Option<String>,
    pub(crate) score: Option<f64>,
    /// When one of its documents was last fetched (unix seconds).
    pub(crate) fetched_at: Option<i64>,
}

/// What the prober last saw of a resource.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ProbeRow {
    pub(crate) url: String,
    pub(crate) status: String,
    pub(crate) checked_at: Option<i64>,
    pub(crate) detail: Option<String>,
}

/// A page of listings with all they need.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// Listings matching, on every page.
    pub(crate) total: i64,
    /// This page's (agent, resource) pairs, in order.
    pub(crate) listings: Vec<(String, String)>,
    /// Every term of this page's agents.
    pub(crate) terms: Vec<TermRow>,
    /// This page's agents.
    pub(crate) agents: HashMap<String, AgentFacts>,
    /// Each agent's skill tags.
    pub(crate) tags: HashMap<String, Vec<String>>,
    /// The last probe of each resource probed.
    pub(crate) probes: HashMap<String, ProbeRow>,
}

/// `coalesce(t.resource, p.card_uri)`: where a term lists.
const LISTED: &str = "coalesce(t.resource, p.card_uri)";

/// The matching pairs' `FROM … WHERE` clause.
fn matching(query: &mut QueryBuilder<'_, Any>, filter: &TermFilter) {
    query.push(format!(
        " FROM {} t JOIN {} p ON p.agent_key = t.agent_key JOIN {} a ON a.agent_key = t.agent_key
         WHERE {LISTED} IS NOT NULL AND length({LISTED}) <= 2000
           AND (lower(substr({LISTED}, 1, 7)) = 'http://' OR lower(substr({LISTED}, 1, 8)) = 'https://')",
        agent_x402_terms::NAME,
        agent_profiles::NAME,
        agents::NAME
    ));
    if filter.none {
        query.push(" AND 1 = 0");
    }
    match filter.with_resource {
        Some(true) => query.push(" AND t.resource IS NOT NULL"),
        Some(false) => query.push(" AND t.resource IS NULL"),
        None => query.push(""),
    };
    if let Some(pay_to) = &filter.pay_to {
        query.push(" AND t.pay_to = ").push_bind(pay_to.clone());
    }
    if let Some(networks) = &filter.networks {
        query.push(" AND t.network");
        in_list(query, networks, "");
    }
    if filter.erc8004 {
        query.push(" AND a.source = 'erc8004'");
    }
}

/// The listings matching `filter`, `limit` from `offset`, ordered by resource then agent.
pub(crate) async fn page(
    pool: &AnyPool,
    filter: &TermFilter,
    limit: i64,
    offset: i64,
) -> sqlx::Result<Page> {
    let dialect = Dialect::of_pool(pool);
    let mut count = QueryBuilder::<Any>::new("SELECT count(*) FROM (SELECT t.agent_key");
    matching(&mut count, filter);
    count.push(format!(" GROUP BY t.agent_key, {LISTED}) x"));
    let total: i64 = dialect
        .portable(count)
        .build_query_scalar()
        .fetch_one(pool)
        .await?;
    let mut listed = QueryBuilder::<Any>::new(format!("SELECT t.agent_key, {LISTED} AS listed"));
    matching(&mut listed, filter);
    listed.push(format!(
        " GROUP BY t.agent_key, {LISTED} ORDER BY listed, t.agent_key LIMIT "
    ));
    listed.push_bind(limit).push(" OFFSET ").push_bind(offset);
    let listings: Vec<(String, String)> = dialect
        .portable(listed)
        .build_query_as()
        .fetch_all(pool)
        .await?;
    let mut page = Page {
        total,
        listings,
        ..Page::default()
    };
    if page.listings.is_empty() {
        return Ok(page);
    }
    let mut keys: Vec<String> = page.listings.iter().map(|(key, _)| key.clone()).collect();
    keys.sort();
    keys.dedup();
    page.terms = terms_of(pool, &keys).await?;
    page.agents = facts_of(pool, &keys).await?;
    page.tags = tags_of(pool, &keys).await?;
    let urls: Vec<String> = page.listings.iter().map(|(_, url)| url.clone()).collect();
    page.probes = probes_of(pool, &urls).await?;
    Ok(page)
}

async fn terms_of(pool: &AnyPool, keys: &[String]) -> sqlx::Result<Vec<TermRow>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT t.agent_key, {LISTED} AS listed,
                CAST(CASE WHEN t.resource IS NULL THEN 0 ELSE 1 END AS BIGINT) AS named,
                t.source, t.network, t.asset, t.amount, t.pay_to, t.skill
         FROM {} t JOIN {} p ON p.agent_key = t.agent_key WHERE t.agent_key",
        agent_x402_terms::NAME,
        agent_profiles::NAME
    ));
    in_list(&mut query, keys, " ORDER BY t.agent_key, t.position");
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await
}

async fn facts_of(pool: &AnyPool, keys: &[String]) -> sqlx::Result<HashMap<String, AgentFacts>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT a.agent_key, a.chain_id, a.source, a.registry, a.token_id, a.owner,
                a.agent_wallet, a.payment_address,
                coalesce(p.name, a.name) AS name, coalesce(p.description, a.description) AS description,
                g.image, r.score,
                (SELECT max(d.fetched_at) FROM {} l JOIN {} d ON d.uri = l.uri AND d.expect = l.expect
                 WHERE l.agent_key = a.agent_key) AS fetched_at
         FROM {} a LEFT JOIN {} p ON p.agent_key = a.agent_key
         LEFT JOIN {} g ON g.agent_key = a.agent_key
         LEFT JOIN {} r ON r.agent_key = a.agent_key
         WHERE a.agent_key",
        agent_documents::NAME,
        documents::NAME,
        agents::NAME,
        agent_profiles::NAME,
        agent_registrations::NAME,
        agent_reputation::NAME
    ));
    in_list(&mut query, keys, "");
    let rows: Vec<AgentFacts> = Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| (row.agent_key.clone(), row))
        .collect())
}

async fn tags_of(pool: &AnyPool, keys: &[String]) -> sqlx::Result<HashMap<String, Vec<String>>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT agent_key, tags FROM {} WHERE agent_key",
        agent_skills::NAME
    ));
    in_list(&mut query, keys, " ORDER BY agent_key, skill_id");
    let rows: Vec<(String, String)> = Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await?;
    let mut tags: HashMap<String, Vec<String>> = HashMap::new();
    for (key, list) in rows {
        let list: Vec<String> = serde_json::from_str(&list).unwrap_or_default();
        let held = tags.entry(key).or_default();
        for tag in list {
            if !held.contains(&tag) {
                held.push(tag);
            }
        }
    }
    Ok(tags)
}

async fn probes_of(pool: &AnyPool, urls: &[String]) -> sqlx::Result<HashMap<String, ProbeRow>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT url, status, checked_at, detail FROM {} WHERE kind = 'x402' AND url",
        probe_endpoints::NAME
    ));
    in_list(&mut query, urls, "");
    let rows: Vec<ProbeRow> = Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|row| (row.url.clone(), row)).collect())
}
