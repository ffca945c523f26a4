//! The documents of many agents at once (registration files, cards, on-chain cards) with their
//! lint reports, for the documents DataLoader.

use agentindex_indexer::schema::{agent_documents, document_lints, documents};
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::{padded, push_in};
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LintRow {
    pub(crate) code: String,
    pub(crate) severity: String,
    pub(crate) message: String,
    pub(crate) path: String,
}

/// One document of an agent.
#[derive(Debug, Clone)]
pub(crate) struct DocumentRow {
    pub(crate) role: String,
    pub(crate) uri: String,
    pub(crate) status: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) signature: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) fetched_at: Option<i64>,
    pub(crate) projection: Option<String>,
    pub(crate) lints: Vec<LintRow>,
}

/// A link of `agent_documents` with what `documents` holds for it.
#[derive(sqlx::FromRow)]
struct Linked {
    agent_key: String,
    role: String,
    uri: String,
    expect: String,
    status: Option<String>,
    kind: Option<String>,
    signature: Option<String>,
    error: Option<String>,
    fetched_at: Option<i64>,
    projection: Option<String>,
}

/// A `document_lints` row.
#[derive(sqlx::FromRow)]
struct StoredLint {
    uri: String,
    expect: String,
    code: String,
    severity: String,
    message: String,
    path: String,
}

/// The documents of each of `keys`, with their lints.
pub(crate) async fn of_agents(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<DocumentRow>>> {
    let mut out: HashMap<String, Vec<DocumentRow>> = HashMap::new();
    for chunk in keys.chunks(400) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT l.agent_key, l.role, l.uri, l.expect, d.status, d.kind, d.signature, d.error,
                    d.fetched_at, d.projection
             FROM {} l LEFT JOIN {} d ON d.uri = l.uri AND d.expect = l.expect
             WHERE l.agent_key",
            agent_documents::NAME,
            documents::NAME
        ));
        push_in(&mut query, chunk.iter().cloned());
        query.push("ORDER BY l.agent_key, l.role, l.uri");
        let linked: Vec<Linked> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        let lints = lints_of(pool, &linked).await?;
        for link in linked {
            // A document without lints has no rows in `document_lints`.
            let found = lints
                .get(&(link.uri.clone(), link.expect))
                .cloned()
                .unwrap_or_default();
            out.entry(link.agent_key).or_default().push(DocumentRow {
                role: link.role,
                uri: link.uri,
                status: link.status,
                kind: link.kind,
                signature: link.signature,
                error: link.error,
                fetched_at: link.fetched_at,
                projection: link.projection,
                lints: found,
            });
        }
    }
    Ok(out)
}

/// Documents whose lints are read per statement: two bound values each, padded to at most
/// 8,192 values, within SQLite's 32,766 and PostgreSQL's 65,535.
const DOCUMENTS_PER_STATEMENT: usize = 4_096;

/// The lints of every document `linked` names (each document once, however many agents link
/// it), in the order the checker reported them.
async fn lints_of(
    pool: &AnyPool,
    linked: &[Linked],
) -> sqlx::Result<BTreeMap<(String, String), Vec<LintRow>>> {
    let documents: Vec<(&str, &str)> = linked
        .iter()
        .map(|link| (link.uri.as_str(), link.expect.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut lints: BTreeMap<(String, String), Vec<LintRow>> = BTreeMap::new();
    for chunk in documents.chunks(DOCUMENTS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT uri, expect, code, severity, message, path FROM {}
             WHERE (uri, expect) IN (VALUES ",
            document_lints::NAME
        ));
        let mut list = query.separated(", ");
        for (uri, expect) in padded(chunk.iter().copied()) {
            list.push("(");
            list.push_bind_unseparated(uri);
            list.push_unseparated(", ");
            list.push_bind_unseparated(expect);
            list.push_unseparated(")");
        }
        // In the order the checker reported them (rows written before `position` existed
        // keep SQLite's insertion order).
        query.push(match Dialect::of_pool(pool) {
            Dialect::Sqlite => ") ORDER BY uri, expect, position, rowid",
            Dialect::Postgres => ") ORDER BY uri, expect, position",
        });
        let rows: Vec<StoredLint> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for row in rows {
            lints
                .entry((row.uri, row.expect))
                .or_default()
                .push(LintRow {
                    code: row.code,
                    severity: row.severity,
                    message: row.message,
                    path: row.path,
                });
        }
    }
    Ok(lints)
}

#[cfg(test)]
#[path = "documents_tests.rs"]
mod tests;
