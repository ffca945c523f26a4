//! ERC-8004 feedback (with revocations and responses) and validations (requests with every
//! response) of many agents at once, for their DataLoaders, and the on-chain history of any
//! agent. Keys are parsed as [`AgentKey`]s; fact rows come back with the columns that name their
//! agent, and are grouped under the key that asked for them.

use super::pages::{PARENTS_PER_STATEMENT, union_of_pages};
use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::schema::{
    agent_contract_events, feedback, feedback_responses, feedback_revocations, identity_approvals,
    identity_metadata, identity_registrations, identity_transfers, identity_uri_updates,
    registry_events, validation_requests, validation_responses, watched_agents,
};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// The agents among some keys, by the columns their facts carry.
#[derive(Default)]
pub(super) struct Subjects<'a> {
    /// ERC-8004 agents by (chain id, identity registry, token id).
    pub(super) tokens: HashMap<(i64, String, String), &'a str>,
    /// Agent contracts by (chain id, contract).
    pub(super) contracts: HashMap<(i64, String), &'a str>,
}

impl<'a> Subjects<'a> {
    /// Parses `keys`; a key that is not an agent key is an error naming it.
    pub(super) fn of(keys: &'a [String]) -> sqlx::Result<Self> {
        let mut subjects = Self::default();
        for key in keys {
            let parsed: AgentKey = key
                .parse()
                .map_err(|error| sqlx::Error::Decode(Box::new(error)))?;
            let chain = i64::try_from(parsed.chain_id())
                .map_err(|error| sqlx::Error::Decode(Box::new(error)))?;
            match parsed {
                AgentKey::Erc8004 {
                    registry, token_id, ..
                } => {
                    let columns = (chain, format!("{registry:#x}"), token_id.to_string());
                    subjects.tokens.insert(columns, key);
                }
                AgentKey::Contract { address, .. } => {
                    subjects
                        .contracts
                        .insert((chain, format!("{address:#x}")), key);
                }
                // Masumi entries have no ERC-8004 feedback or contract events.
                AgentKey::Masumi { .. } => {}
            }
        }
        Ok(subjects)
    }

    /// The key a fact of token `token_id` of `registry` on `chain_id` belongs to.
    fn token_key(&self, chain_id: i64, registry: &str, token_id: &str) -> Option<&'a str> {
        self.tokens
            .get(&(chain_id, registry.to_string(), token_id.to_string()))
            .copied()
    }
}

/// A feedback with what happened to it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct FeedbackRow {
    pub(crate) chain_id: i64,
    pub(crate) registry: String,
    pub(crate) token_id: String,
    pub(crate) client: String,
    pub(crate) feedback_index: Option<i64>,
    pub(crate) value: String,
    pub(crate) value_decimals: i64,
    pub(crate) tag1: String,
    pub(crate) tag2: String,
    pub(crate) endpoint: String,
    pub(crate) feedback_uri: String,
    pub(crate) block_number: i64,
    pub(crate) log_index: i64,
    pub(crate) tx_hash: String,
    pub(crate) timestamp: i64,
    #[sqlx(try_from = "agentindex_indexer::store::Flag")]
    pub(crate) revoked: bool,
    /// Every response: {responder, uri, hash, block}.
    #[sqlx(try_from = "String")]
    pub(crate) responses: agentindex_indexer::store::JsonColumn,
}

/// A validation request with every response to it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ValidationRow {
    pub(crate) chain_id: i64,
    pub(crate) registry: String,
    pub(crate) token_id: String,
    pub(crate) request_hash: String,
    pub(crate) validator: String,
    pub(crate) request_uri: String,
    pub(crate) block_number: i64,
    pub(crate) log_index: i64,
    pub(crate) tx_hash: String,
    /// Every response, oldest first: {response, uri, tag, block, timestamp}.
    #[sqlx(try_from = "String")]
    pub(crate) responses: agentindex_indexer::store::JsonColumn,
}

/// Which page of each agent's list to read: its newest `rows` items strictly before `after`.
/// Lists are newest first, by (block, log index); every branch of a statement reads one agent's
/// page through the index in that order and stops after `rows`, so a page costs the same
/// however long the list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Window {
    /// Items to read per agent (a page and one more, which tells whether another follows).
    pub(crate) rows: i64,
    /// (block, log index) of the last item already seen, if any.
    pub(crate) after: Option<(i64, i64)>,
}

impl Window {
    /// The same window in the store's terms (a position before the chain's start is none).
    pub(crate) fn in_store(self) -> agentindex_indexer::store::PageWindow {
        let unsigned = |n: i64| u64::try_from(n).unwrap_or(0);
        agentindex_indexer::store::PageWindow {
            rows: unsigned(self.rows),
            after: self
                .after
                .map(|(block, log_index)| (unsigned(block), unsigned(log_index))),
        }
    }

    /// `AND` the items of `alias` (a table with `block_number` and `log_index`) this window
    /// starts after, written so the index's range on `block_number` does the skipping.
    fn push_after(&self, query: &mut QueryBuilder<'_, Any>, alias: &str) {
        if let Some((block, log_index)) = self.after {
            query.push(format!(" AND {alias}.block_number <= "));
            query.push_bind(block);
            query.push(format!(" AND ({alias}.block_number < "));
            query.push_bind(block);
            query.push(format!(" OR {alias}.log_index < "));
            query.push_bind(log_index);
            query.push(")");
        }
    }

    /// The newest-first order and the window's size.
    fn push_limit(&self, query: &mut QueryBuilder<'_, Any>, alias: &str) {
        query.push(format!(
            " ORDER BY {alias}.block_number DESC, {alias}.log_index DESC LIMIT "
        ));
        query.push_bind(self.rows);
    }
}

/// `alias.chain_id = ? AND alias.registry = ? AND alias.token_id = ?` for one token.
pub(super) fn push_token(
    query: &mut QueryBuilder<'_, Any>,
    alias: &str,
    (chain, registry, token): &(i64, String, String),
) {
    query.push(format!(" {alias}.chain_id = "));
    query.push_bind(*chain);
    query.push(format!(" AND {alias}.registry = "));
    query.push_bind(registry.clone());
    query.push(format!(" AND {alias}.token_id = "));
    query.push_bind(token.clone());
}

/// One statement reading `window` of each of `subjects` from `select` (`SELECT … FROM table
/// alias WHERE`, the agent's condition appended by `condition`), as one `UNION ALL` branch per
/// agent ([`union_of_pages`]).
fn paged<'a, S>(
    select: &str,
    alias: &str,
    subjects: impl IntoIterator<Item = S>,
    window: Window,
    condition: impl Fn(&mut QueryBuilder<'a, Any>, &str, S),
) -> QueryBuilder<'a, Any> {
    let mut query = QueryBuilder::<Any>::new("");
    union_of_pages(&mut query, subjects, |query, _, subject| {
        query.push(select);
        condition(query, alias, subject);
        window.push_after(query, alias);
        window.push_limit(query, alias);
    });
    query
}

/// Keeps each agent's newest `window.rows` of `rows`, newest first.
fn newest_per_key<R>(
    out: &mut HashMap<String, Vec<R>>,
    rows: impl IntoIterator<Item = (String, R)>,
    position: impl Fn(&R) -> (i64, i64),
    window: Window,
) {
    for (key, row) in rows {
        out.entry(key).or_default().push(row);
    }
    for list in out.values_mut() {
        list.sort_by_key(|row| std::cmp::Reverse(position(row)));
        list.truncate(usize::try_from(window.rows).unwrap_or(0));
    }
}

/// The page `window` of the feedback of each of `keys`, newest first.
pub(crate) async fn feedback(
    pool: &AnyPool,
    keys: &[String],
    window: Window,
) -> sqlx::Result<HashMap<String, Vec<FeedbackRow>>> {
    let mut out: HashMap<String, Vec<FeedbackRow>> = HashMap::new();
    let dialect = Dialect::of_pool(pool);
    for chunk in keys.chunks(PARENTS_PER_STATEMENT) {
        let subjects = Subjects::of(chunk)?;
        if subjects.tokens.is_empty() {
            continue;
        }
        let responses = dialect.json_objects(
            "'responder', p.responder, 'uri', p.response_uri, 'hash', p.response_hash, \
             'block', p.block_number",
        );
        let select = format!(
            "SELECT f.chain_id, f.registry, f.token_id, f.client,
                f.feedback_index, f.value, f.value_decimals, f.tag1, f.tag2, f.endpoint,
                f.feedback_uri, f.block_number, f.log_index, f.tx_hash, f.timestamp,
                EXISTS (SELECT 1 FROM {revocations} r
                        WHERE r.chain_id = f.chain_id AND r.registry = f.registry
                          AND r.token_id = f.token_id AND r.client = f.client
                          AND r.feedback_index = f.feedback_index) AS revoked,
                (SELECT {responses}
                   FROM {responses_table} p
                  WHERE p.chain_id = f.chain_id AND p.registry = f.registry
                    AND p.token_id = f.token_id AND p.client = f.client
                    AND p.feedback_index = f.feedback_index) AS responses
             FROM {feedback_table} f WHERE",
            revocations = feedback_revocations::NAME,
            responses_table = feedback_responses::NAME,
            feedback_table = feedback::NAME,
        );
        let query = paged(&select, "f", subjects.tokens.keys(), window, push_token);
        let rows: Vec<FeedbackRow> = dialect
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        let keyed = rows.into_iter().filter_map(|row| {
            let key = subjects.token_key(row.chain_id, &row.registry, &row.token_id)?;
            Some((key.to_string(), row))
        });
        newest_per_key(&mut out, keyed, |r| (r.block_number, r.log_index), window);
    }
    Ok(out)
}

/// The page `window` of the validation requests of each of `keys`, newest first, each with its
/// responses.
pub(crate) async fn validations(
    pool: &AnyPool,
    keys: &[String],
    window: Window,
) -> sqlx::Result<HashMap<String, Vec<ValidationRow>>> {
    let mut out: HashMap<String, Vec<ValidationRow>> = HashMap::new();
    let dialect = Dialect::of_pool(pool);
    for chunk in keys.chunks(PARENTS_PER_STATEMENT) {
        let subjects = Subjects::of(chunk)?;
        if subjects.tokens.is_empty() {
            continue;
        }
        let responses = dialect.json_objects(
            "'response', s.response, 'uri', s.response_uri, 'tag', s.tag, \
             'block', s.block_number, 'timestamp', s.timestamp",
        );
        let select = format!(
            "SELECT v.chain_id, v.registry, v.token_id,
                v.request_hash, v.validator, v.request_uri, v.block_number, v.log_index,
                v.tx_hash,
                (SELECT {responses}
                   FROM (SELECT * FROM {responses_table} s
                          WHERE s.chain_id = v.chain_id AND s.registry = v.registry
                            AND s.request_hash = v.request_hash
                          ORDER BY s.block_number, s.log_index) s) AS responses
             FROM {requests_table} v WHERE",
            responses_table = validation_responses::NAME,
            requests_table = validation_requests::NAME,
        );
        let query = paged(&select, "v", subjects.tokens.keys(), window, push_token);
        let rows: Vec<ValidationRow> = dialect
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        let keyed = rows.into_iter().filter_map(|row| {
            let key = subjects.token_key(row.chain_id, &row.registry, &row.token_id)?;
            Some((key.to_string(), row))
        });
        newest_per_key(&mut out, keyed, |r| (r.block_number, r.log_index), window);
    }
    Ok(out)
}

/// One on-chain event in an agent's history.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct HistoryRow {
    pub(crate) chain_id: i64,
    /// The identity registry of an ERC-8004 agent, or the agent contract.
    pub(crate) address: String,
    /// The token id of an ERC-8004 agent.
    pub(crate) token_id: Option<String>,
    pub(crate) block_number: i64,
    pub(crate) log_index: i64,
    pub(crate) kind: String,
    /// What the event said.
    #[sqlx(try_from = "String")]
    pub(crate) detail: agentindex_indexer::store::JsonColumn,
}

/// The page `window` of the on-chain history of each of `keys`, newest first: for ERC-8004
/// agents registration, transfers, URI and metadata changes and approvals; for agent contracts
/// discovery, their own events and registry events. Each table is read a page per agent, then
/// the pages merged: at most one page per table and agent is read.
pub(crate) async fn history(
    pool: &AnyPool,
    keys: &[String],
    window: Window,
) -> sqlx::Result<HashMap<String, Vec<HistoryRow>>> {
    let mut out: HashMap<String, Vec<HistoryRow>> = HashMap::new();
    let dialect = Dialect::of_pool(pool);
    for chunk in keys.chunks(PARENTS_PER_STATEMENT) {
        let subjects = Subjects::of(chunk)?;
        let mut rows: Vec<HistoryRow> = Vec::new();
        if !subjects.tokens.is_empty() {
            for (kind, table, detail) in [
                (
                    "registered",
                    identity_registrations::NAME,
                    dialect.json_object("'owner', t.owner, 'uri', t.uri"),
                ),
                (
                    "transferred",
                    identity_transfers::NAME,
                    dialect.json_object("'from', t.from_address, 'to', t.to_address"),
                ),
                (
                    "uri_updated",
                    identity_uri_updates::NAME,
                    dialect.json_object("'uri', t.uri, 'by', t.updated_by"),
                ),
                (
                    "metadata_set",
                    identity_metadata::NAME,
                    dialect.json_object(&format!(
                        "'key', t.key, 'value', '0x' || {}",
                        dialect.hex("t.value")
                    )),
                ),
                (
                    "approval",
                    identity_approvals::NAME,
                    dialect.json_object("'operator', t.operator, 'approved', t.approved"),
                ),
            ] {
                let select = format!(
                    "SELECT t.chain_id, t.registry AS address, t.token_id,
                        t.block_number, t.log_index, '{kind}' AS kind, {detail} AS detail
                     FROM {table} t WHERE"
                );
                let query = paged(&select, "t", subjects.tokens.keys(), window, push_token);
                rows.extend(
                    dialect
                        .portable(query)
                        .build_query_as::<HistoryRow>()
                        .fetch_all(pool)
                        .await?,
                );
            }
        }
        if !subjects.contracts.is_empty() {
            for (select, column) in [
                (
                    format!("'discovered' AS kind, {} AS detail FROM {} t", dialect.json_object("'by', t.discovered_by, 'via', t.via"), watched_agents::NAME),
                    watched_agents::address.name,
                ),
                (
                    format!("t.kind AS kind, {} AS detail FROM {} t", dialect.json_object("'value', t.value"), agent_contract_events::NAME),
                    agent_contract_events::agent.name,
                ),
                (
                    format!("'registry_' || t.kind AS kind, {} AS detail FROM {} t", dialect.json_object("'registry', t.registry, 'actor', t.actor, 'uri', t.metadata_uri, 'reason', t.reason"), registry_events::NAME),
                    registry_events::agent.name,
                ),
            ] {
                let select = format!(
                    "SELECT t.chain_id, t.{column} AS address, NULL AS token_id, t.block_number,
                        t.log_index, {select}
                     WHERE"
                );
                let query = paged(
                    &select,
                    "t",
                    subjects.contracts.keys(),
                    window,
                    |query, alias, (chain, address): &(i64, String)| {
                        query.push(format!(" {alias}.chain_id = "));
                        query.push_bind(*chain);
                        query.push(format!(" AND {alias}.{column} = "));
                        query.push_bind(address.clone());
                    },
                );
                rows.extend(dialect.portable(query).build_query_as::<HistoryRow>().fetch_all(pool).await?);
            }
        }
        let keyed = rows.into_iter().filter_map(|row| {
            let key = match &row.token_id {
                Some(token) => subjects.token_key(row.chain_id, &row.address, token),
                None => subjects
                    .contracts
                    .get(&(row.chain_id, row.address.clone()))
                    .copied(),
            }?;
            Some((key.to_string(), row))
        });
        newest_per_key(&mut out, keyed, |r| (r.block_number, r.log_index), window);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "activity_tests.rs"]
mod tests;
