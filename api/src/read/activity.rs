//! ERC-8004 feedback (with revocations and responses) and validations (requests with every
//! response) of many agents at once, for their DataLoaders, and the on-chain history of any
//! agent. Keys are parsed as [`AgentKey`]s; fact rows come back with the columns that name their
//! agent, and are grouped under the key that asked for them.

use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// The agents among some keys, by the columns their facts carry.
#[derive(Default)]
struct Subjects<'a> {
    /// ERC-8004 agents by (chain id, identity registry, token id).
    tokens: HashMap<(i64, String, String), &'a str>,
    /// Agent contracts by (chain id, contract).
    contracts: HashMap<(i64, String), &'a str>,
}

impl<'a> Subjects<'a> {
    /// Parses `keys`; a key that is not an agent key is an error naming it.
    fn of(keys: &'a [String]) -> sqlx::Result<Self> {
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

fn push_tokens(
    query: &mut QueryBuilder<'_, Any>,
    alias: &str,
    tokens: &HashMap<(i64, String, String), &str>,
) {
    query.push(format!(
        " ({alias}.chain_id, {alias}.registry, {alias}.token_id) IN (VALUES "
    ));
    let mut list = query.separated(", ");
    for (chain, registry, token) in tokens.keys() {
        list.push("(");
        list.push_bind_unseparated(*chain);
        list.push_unseparated(", ");
        list.push_bind_unseparated(registry.to_string());
        list.push_unseparated(", ");
        list.push_bind_unseparated(token.to_string());
        list.push_unseparated(")");
    }
    query.push(")");
}

/// Every feedback of each of `keys`, newest first.
pub(crate) async fn feedback(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<FeedbackRow>>> {
    let mut out: HashMap<String, Vec<FeedbackRow>> = HashMap::new();
    for chunk in keys.chunks(300) {
        let subjects = Subjects::of(chunk)?;
        if subjects.tokens.is_empty() {
            continue;
        }
        let responses = Dialect::of_pool(pool).json_objects(
            "'responder', p.responder, 'uri', p.response_uri, 'hash', p.response_hash, \
             'block', p.block_number",
        );
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT f.chain_id, f.registry, f.token_id, f.client,
                f.feedback_index, f.value, f.value_decimals, f.tag1, f.tag2, f.endpoint,
                f.feedback_uri, f.block_number, f.log_index, f.tx_hash, f.timestamp,
                EXISTS (SELECT 1 FROM feedback_revocations r
                        WHERE r.chain_id = f.chain_id AND r.registry = f.registry
                          AND r.token_id = f.token_id AND r.client = f.client
                          AND r.feedback_index = f.feedback_index) AS revoked,
                (SELECT {responses}
                   FROM feedback_responses p
                  WHERE p.chain_id = f.chain_id AND p.registry = f.registry
                    AND p.token_id = f.token_id AND p.client = f.client
                    AND p.feedback_index = f.feedback_index) AS responses
             FROM feedback f WHERE"
        ));
        push_tokens(&mut query, "f", &subjects.tokens);
        query.push(" ORDER BY f.block_number DESC, f.log_index DESC");
        let rows: Vec<FeedbackRow> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for row in rows {
            if let Some(key) = subjects.token_key(row.chain_id, &row.registry, &row.token_id) {
                out.entry(key.to_string()).or_default().push(row);
            }
        }
    }
    Ok(out)
}

/// Every validation request of each of `keys`, newest first, with its responses.
pub(crate) async fn validations(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<ValidationRow>>> {
    let mut out: HashMap<String, Vec<ValidationRow>> = HashMap::new();
    for chunk in keys.chunks(300) {
        let subjects = Subjects::of(chunk)?;
        if subjects.tokens.is_empty() {
            continue;
        }
        let responses = Dialect::of_pool(pool).json_objects(
            "'response', s.response, 'uri', s.response_uri, 'tag', s.tag, \
             'block', s.block_number, 'timestamp', s.timestamp",
        );
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT v.chain_id, v.registry, v.token_id,
                v.request_hash, v.validator, v.request_uri, v.block_number, v.log_index,
                v.tx_hash,
                (SELECT {responses}
                   FROM (SELECT * FROM validation_responses s
                          WHERE s.chain_id = v.chain_id AND s.registry = v.registry
                            AND s.request_hash = v.request_hash
                          ORDER BY s.block_number, s.log_index) s) AS responses
             FROM validation_requests v WHERE"
        ));
        push_tokens(&mut query, "v", &subjects.tokens);
        query.push(" ORDER BY v.block_number DESC, v.log_index DESC");
        let rows: Vec<ValidationRow> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for row in rows {
            if let Some(key) = subjects.token_key(row.chain_id, &row.registry, &row.token_id) {
                out.entry(key.to_string()).or_default().push(row);
            }
        }
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

/// The on-chain history of each of `keys`, newest first: for ERC-8004 agents registration,
/// transfers, URI and metadata changes and approvals; for agent contracts discovery, their own
/// events and registry events.
pub(crate) async fn history(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<HistoryRow>>> {
    let mut out: HashMap<String, Vec<HistoryRow>> = HashMap::new();
    let dialect = Dialect::of_pool(pool);
    for chunk in keys.chunks(200) {
        let subjects = Subjects::of(chunk)?;
        let mut rows: Vec<HistoryRow> = Vec::new();
        if !subjects.tokens.is_empty() {
            for (kind, table, detail) in [
                (
                    "registered",
                    "identity_registrations",
                    dialect.json_object("'owner', t.owner, 'uri', t.uri"),
                ),
                (
                    "transferred",
                    "identity_transfers",
                    dialect.json_object("'from', t.from_address, 'to', t.to_address"),
                ),
                (
                    "uri_updated",
                    "identity_uri_updates",
                    dialect.json_object("'uri', t.uri, 'by', t.updated_by"),
                ),
                (
                    "metadata_set",
                    "identity_metadata",
                    dialect.json_object(&format!(
                        "'key', t.key, 'value', '0x' || {}",
                        dialect.hex("t.value")
                    )),
                ),
                (
                    "approval",
                    "identity_approvals",
                    dialect.json_object("'operator', t.operator, 'approved', t.approved"),
                ),
            ] {
                let mut query = QueryBuilder::<Any>::new(format!(
                    "SELECT t.chain_id, t.registry AS address, t.token_id,
                        t.block_number, t.log_index, '{kind}' AS kind, {detail} AS detail
                     FROM {table} t WHERE"
                ));
                push_tokens(&mut query, "t", &subjects.tokens);
                rows.extend(
                    Dialect::of_pool(pool)
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
                    format!("'discovered' AS kind, {} AS detail FROM watched_agents t", dialect.json_object("'by', t.discovered_by, 'via', t.via")),
                    "address",
                ),
                (
                    format!("t.kind AS kind, {} AS detail FROM agent_contract_events t", dialect.json_object("'value', t.value")),
                    "agent",
                ),
                (
                    format!("'registry_' || t.kind AS kind, {} AS detail FROM registry_events t", dialect.json_object("'registry', t.registry, 'actor', t.actor, 'uri', t.metadata_uri, 'reason', t.reason")),
                    "agent",
                ),
            ] {
                let mut query = QueryBuilder::<Any>::new(format!(
                    "SELECT t.chain_id, t.{column} AS address, NULL AS token_id, t.block_number,
                        t.log_index, {select}
                     WHERE (t.chain_id, t.{column}) IN (VALUES "
                ));
                let mut list = query.separated(", ");
                for (chain, address) in subjects.contracts.keys() {
                    list.push("(");
                    list.push_bind_unseparated(*chain);
                    list.push_unseparated(", ");
                    list.push_bind_unseparated(address.to_string());
                    list.push_unseparated(")");
                }
                query.push(")");
                rows.extend(Dialect::of_pool(pool).portable(query).build_query_as::<HistoryRow>().fetch_all(pool).await?);
            }
        }
        rows.sort_by_key(|r| std::cmp::Reverse((r.block_number, r.log_index)));
        for row in rows {
            let key = match &row.token_id {
                Some(token) => subjects.token_key(row.chain_id, &row.address, token),
                None => subjects
                    .contracts
                    .get(&(row.chain_id, row.address.clone()))
                    .copied(),
            };
            if let Some(key) = key {
                out.entry(key.to_string()).or_default().push(row);
            }
        }
    }
    Ok(out)
}
