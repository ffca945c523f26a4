//! The bytes of one agent's card or registration file as it was fetched, for the MCP
//! resources that serve them whole (`crate::mcp::resources`).

use agentindex_indexer::schema::{agent_documents, documents};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};

/// The largest document served whole: what the fetcher reads of one over HTTP.
pub(crate) const MOST_BYTES: i64 = 1024 * 1024;

/// A stored document, as fetched.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct DocumentBody {
    /// Where the chain points.
    pub(crate) uri: String,
    /// Its length in bytes.
    pub(crate) size: i64,
    /// The bytes read there, unless there are more than [`MOST_BYTES`] (an on-chain card
    /// can hold any number).
    pub(crate) bytes: Option<Vec<u8>>,
}

/// The good document of `kind` (`card` or `registration`) linked to `agent_key`: an off-chain
/// document before one written on-chain, then by address. `None` when the agent has none, or
/// none was read without fault.
pub(crate) async fn of_agent(
    pool: &AnyPool,
    agent_key: &str,
    kind: &str,
) -> sqlx::Result<Option<DocumentBody>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT l.uri, length(d.bytes) AS size,
                CASE WHEN length(d.bytes) <= {MOST_BYTES} THEN d.bytes END AS bytes
         FROM {} l JOIN {} d ON d.uri = l.uri AND d.expect = l.expect
         WHERE l.agent_key = ",
        agent_documents::NAME,
        documents::NAME
    ));
    query.push_bind(agent_key.to_owned());
    query.push(" AND d.kind = ");
    query.push_bind(kind.to_owned());
    query.push(
        " AND d.status = 'ok' AND d.bytes IS NOT NULL
         ORDER BY CASE WHEN l.role = 'onchain' THEN 1 ELSE 0 END, l.uri LIMIT 1",
    );
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_optional(pool)
        .await
}
