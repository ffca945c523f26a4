//! The agent0 subgraph's GraphQL, answered from agentindex's store at graph-node's URL
//! (`/subgraphs/name/agent0`, every chain; `/subgraphs/name/agent0/{chainId}`, one), so an
//! agent0 SDK user swaps one URL. [`catalogue`] is the schema and the SQL behind each field
//! (written once for each database), [`plan`] reads a request against it, [`filter`] compiles
//! `where`, [`statements`] writes what a plan reads, [`execute`] runs it, [`values`] types what
//! comes back, [`written`] writes it into the response and [`refusal`] words what is refused;
//! `_meta` and the `block` argument are answered here.

#[cfg(test)]
mod budget_fuzz_tests;
pub(crate) mod catalogue;
pub(crate) mod execute;
pub(crate) mod filter;
mod nested;
pub(crate) mod plan;
pub(crate) mod refusal;
pub(crate) mod sql;
pub(crate) mod statements;
pub(crate) mod values;
pub(crate) mod written;

use crate::budget::QueryBudget;
use crate::cache_key::CacheKey;
use crate::client_error;
use crate::metrics::Endpoint;
use crate::row_budget::RowBudget;
use crate::state::ApiState;
use agentindex_indexer::schema::{chain_cursor, events};
use agentindex_indexer::store::Flag;
use async_graphql::indexmap::IndexMap;
use async_graphql::{Name, Value as ConstValue};
use async_graphql_axum::GraphQLRequest;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use execute::Source;
use plan::{MetaItem, Plan, QueryError, Root};
use refusal::Refusal;
use serde_json::json;

/// The subgraph name agentindex answers under.
pub const SUBGRAPH_NAME: &str = "agent0";

/// `POST /subgraphs/name/agent0`.
pub(crate) async fn post_all(State(state): State<ApiState>, request: GraphQLRequest) -> Response {
    answer(&state, None, request.into_inner()).await
}

/// `POST /subgraphs/name/agent0/{chainId}`.
pub(crate) async fn post_chain(
    State(state): State<ApiState>,
    Path(chain): Path<String>,
    request: GraphQLRequest,
) -> Response {
    match chain_of(&chain) {
        Ok(chain) => answer(&state, Some(chain), request.into_inner()).await,
        Err(refused) => refused.into_response(),
    }
}

/// `GET /subgraphs/name/agent0?query=…`.
pub(crate) async fn get_all(State(state): State<ApiState>, RawQuery(raw): RawQuery) -> Response {
    match request_in_url(raw) {
        Ok(request) => answer(&state, None, request).await,
        Err(refused) => refused.into_response(),
    }
}

/// `GET /subgraphs/name/agent0/{chainId}?query=…`.
pub(crate) async fn get_chain(
    State(state): State<ApiState>,
    Path(chain): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let chain = match chain_of(&chain) {
        Ok(chain) => chain,
        Err(refused) => return refused.into_response(),
    };
    match request_in_url(raw) {
        Ok(request) => answer(&state, Some(chain), request).await,
        Err(refused) => refused.into_response(),
    }
}

/// Why a request was refused before it was read: its status and the reason.
type Refused = (StatusCode, String);

fn chain_of(text: &str) -> Result<u64, Refused> {
    text.parse().map_err(|_| {
        (
            StatusCode::NOT_FOUND,
            format!("no subgraph named {SUBGRAPH_NAME}/{text}: the name after {SUBGRAPH_NAME}/ is a chain id"),
        )
    })
}

fn request_in_url(raw: Option<String>) -> Result<async_graphql::Request, Refused> {
    let raw = raw.filter(|raw| !raw.is_empty()).ok_or_else(|| {
        (
            StatusCode::BAD_REQUEST,
            "the URL has no `query` parameter".to_string(),
        )
    })?;
    async_graphql::http::parse_query_string(&raw).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            format!("the URL holds no GraphQL request: {e}"),
        )
    })
}

/// Runs one request: from the response cache while the database is unchanged, else planned and
/// run under the same limits as `/graphql`; counted under `subgraph:{operation}` in `/metrics`
/// (named as `/graphql` names it).
async fn answer(state: &ApiState, chain: Option<u64>, request: async_graphql::Request) -> Response {
    let started = std::time::Instant::now();
    let operation = crate::http::operation_label(&request);
    let endpoint = match chain {
        Some(chain) => format!("subgraph/{chain}"),
        None => "subgraph".to_string(),
    };
    let key = Some(CacheKey::of(&endpoint, &request));
    let version = state.cache.version().await.ok();
    if let (Some(key), Some(version)) = (&key, version)
        && let Some(body) = state.cache.get(key, version)
    {
        state
            .metrics
            .observe(Endpoint::Subgraph, &operation, started.elapsed());
        return json_body(StatusCode::OK, body);
    }
    let (status, body, cacheable) = match run(state, chain, &request).await {
        Ok(body) => (StatusCode::OK, body, true),
        Err(errors) => (
            StatusCode::OK,
            serde_json::to_vec(
                &json!({ "errors": errors.iter().map(error_json).collect::<Vec<_>>() }),
            )
            .unwrap_or_default(),
            false,
        ),
    };
    if let (Some(key), Some(version), true) = (key, version, cacheable) {
        state.cache.put(key, version, &body);
    }
    state
        .metrics
        .observe(Endpoint::Subgraph, &operation, started.elapsed());
    json_body(status, body)
}

fn error_json(error: &QueryError) -> serde_json::Value {
    match error.at {
        Some(at) => json!({
            "message": error.message,
            "locations": [{ "line": at.line, "column": at.column }],
        }),
        None => json!({ "message": error.message }),
    }
}

fn json_body(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The body of the answer to `request`: `{"data":{…}}`.
async fn run(
    state: &ApiState,
    chain: Option<u64>,
    request: &async_graphql::Request,
) -> Result<Vec<u8>, Vec<QueryError>> {
    // Planning is synchronous and expands fragments: the budget (`[api.query_limits]`) is
    // checked inside it first, so what reaches the expansion is small.
    let budget = QueryBudget::new(state.api.query_limits.clone());
    let common_words = state.common_words.of(&state.store).await;
    let plan = filter::with_list_cap(state.api.reads.max_list_argument, || {
        filter::with_common_words(common_words, || {
            plan::plan(
                state.store.dialect(),
                &request.query,
                request.operation_name.as_deref(),
                &request.variables,
                &budget,
            )
        })
    })
    .map_err(|e| vec![e])?;
    let limit = state.api.reads.query_time_limit();
    match tokio::time::timeout(limit, execute_plan(state, chain, plan)).await {
        Ok(result) => result,
        Err(_) => Err(vec![QueryError {
            message: format!("the query ran longer than {limit:?} and was stopped"),
            at: None,
        }]),
    }
}

/// Runs `plan`: the body of its answer, `{"data":{…}}`, each root field written as JSON under
/// its key in the order the query asked for them (a key asked twice in the place of the first,
/// with the last one's value).
async fn execute_plan(
    state: &ApiState,
    chain: Option<u64>,
    plan: Plan,
) -> Result<Vec<u8>, Vec<QueryError>> {
    let pool = state.store.reader();
    let failed = |e: execute::RunError| {
        let message = match &e {
            execute::RunError::Store(e) => client_error::hide("reading the index", e).to_string(),
            execute::RunError::Refused(_) | execute::RunError::Query(_) => e.to_string(),
        };
        vec![QueryError { message, at: None }]
    };
    // Where the index stands is read only for a query that asks (`_meta`, `block`).
    let asks_head = plan.block.is_some()
        || plan
            .roots
            .iter()
            .any(|(_, root)| matches!(root, Root::Meta(_)));
    let head = if asks_head {
        Some(
            Head::read(pool, chain)
                .await
                .map_err(|e| failed(e.into()))?,
        )
    } else {
        None
    };
    if let (Some(number), Some(head)) = (plan.block, &head) {
        head.answers(number).map_err(|refusal| {
            vec![QueryError {
                message: refusal.to_string(),
                at: None,
            }]
        })?;
    }
    let rows = RowBudget::new(state.api.reads.max_rows_per_request);
    let source = Source {
        pool,
        chain,
        rows: &rows,
    };
    let mut data: IndexMap<String, Vec<u8>> = IndexMap::new();
    for (key, root) in plan.roots {
        let mut value = Vec::new();
        match root {
            Root::Typename => written::write_str("Query", &mut value),
            Root::List(query) => source.list(&query, &mut value).await.map_err(failed)?,
            Root::Single { entity, id, items } => source
                .single(entity, &id, &items, &mut value)
                .await
                .map_err(failed)?,
            Root::Meta(items) => {
                let meta = head.as_ref().expect("read for _meta").meta(&items);
                serde_json::to_writer(&mut value, &meta).expect("writing to a Vec cannot fail");
            }
        }
        data.insert(key, value);
    }
    let size: usize = data
        .iter()
        .map(|(key, value)| key.len() + value.len() + 4)
        .sum();
    let mut body = Vec::with_capacity(size + 12);
    body.extend_from_slice(b"{\"data\":{");
    for (n, (key, value)) in data.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        written::write_str(key, &mut body);
        body.push(b':');
        body.extend_from_slice(value);
    }
    body.extend_from_slice(b"}}");
    Ok(body)
}

/// The indexed block the answers stand at: the least advanced of the chains served.
struct Head {
    number: i64,
    hash: Option<String>,
    timestamp: Option<i64>,
    has_errors: bool,
}

impl Head {
    async fn read(pool: &sqlx::AnyPool, chain: Option<u64>) -> sqlx::Result<Self> {
        let statement = format!(
            "SELECT c.indexed_block, c.indexed_hash,
                    (SELECT e.block_timestamp FROM {events} e WHERE e.chain_id = c.chain_id AND e.block_number = c.indexed_block LIMIT 1),
                    EXISTS (SELECT 1 FROM {events} e WHERE e.chain_id = c.chain_id AND e.decode_error IS NOT NULL)
               FROM {cursor} c WHERE ($1 IS NULL OR c.chain_id = $1)
              ORDER BY c.indexed_block LIMIT 1",
            events = events::NAME,
            cursor = chain_cursor::NAME
        );
        let row: Option<(i64, Option<String>, Option<i64>, Flag)> = sqlx::query_as(&statement)
            .bind(chain.map(|c| c as i64))
            .fetch_optional(pool)
            .await?;
        let (number, hash, timestamp, Flag(has_errors)) =
            row.unwrap_or((0, None, None, Flag(false)));
        Ok(Self {
            number: number.max(0),
            hash,
            timestamp,
            has_errors,
        })
    }

    /// Whether a query at block `number` can be answered: the index holds the latest state only.
    fn answers(&self, number: i64) -> Result<(), Refusal> {
        if number > self.number {
            return Err(Refusal::BlockNotYetIndexed {
                subgraph: SUBGRAPH_NAME,
                indexed: self.number,
                asked: number,
            });
        }
        if number < self.number {
            return Err(Refusal::BlockBeforeHead {
                indexed: self.number,
                asked: number,
            });
        }
        Ok(())
    }

    fn meta(&self, items: &[MetaItem]) -> ConstValue {
        let mut object = IndexMap::new();
        for item in items {
            let value = match item.name.as_str() {
                "__typename" => ConstValue::String("_Meta_".into()),
                "deployment" => ConstValue::String(format!("agentindex/{SUBGRAPH_NAME}")),
                "hasIndexingErrors" => ConstValue::Boolean(self.has_errors),
                "block" => {
                    let mut block = IndexMap::new();
                    for field in &item.items {
                        let value = match field.name.as_str() {
                            "__typename" => ConstValue::String("_Block_".into()),
                            "number" => ConstValue::Number(self.number.into()),
                            "hash" => self
                                .hash
                                .clone()
                                .map_or(ConstValue::Null, ConstValue::String),
                            "timestamp" => self
                                .timestamp
                                .map_or(ConstValue::Null, |t| ConstValue::Number(t.into())),
                            _ => ConstValue::Null,
                        };
                        block.insert(Name::new(&field.key), value);
                    }
                    ConstValue::Object(block)
                }
                _ => ConstValue::Null,
            };
            object.insert(Name::new(&item.key), value);
        }
        ConstValue::Object(object)
    }
}
