//! The documents of many agents at once (registration files, cards, on-chain cards) with their
//! lint reports, for the documents DataLoader.

use sqlx::{QueryBuilder, Sqlite, SqlitePool};
use std::collections::{BTreeMap, HashMap};

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

type Linked = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

/// The documents of each of `keys`, with their lints.
pub(crate) async fn of_agents(
    pool: &SqlitePool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<DocumentRow>>> {
    let mut out: HashMap<String, Vec<DocumentRow>> = HashMap::new();
    for chunk in keys.chunks(400) {
        let mut query = QueryBuilder::<Sqlite>::new(
            "SELECT l.agent_key, l.role, l.uri, l.expect, d.status, d.kind, d.signature, d.error,
                    d.fetched_at, d.projection
             FROM agent_documents l LEFT JOIN documents d ON d.uri = l.uri AND d.expect = l.expect
             WHERE l.agent_key IN (",
        );
        let mut list = query.separated(", ");
        for key in chunk {
            list.push_bind(key.clone());
        }
        query.push(") ORDER BY l.agent_key, l.role, l.uri");
        let linked: Vec<Linked> = query.build_query_as().fetch_all(pool).await?;
        let mut lints: BTreeMap<(String, String), Vec<LintRow>> = BTreeMap::new();
        if !linked.is_empty() {
            let mut query = QueryBuilder::<Sqlite>::new(
                "SELECT uri, expect, code, severity, message, path FROM document_lints
                 WHERE (uri, expect) IN (VALUES ",
            );
            let mut list = query.separated(", ");
            for (_, _, uri, expect, ..) in &linked {
                list.push("(");
                list.push_bind_unseparated(uri.clone());
                list.push_unseparated(", ");
                list.push_bind_unseparated(expect.clone());
                list.push_unseparated(")");
            }
            query.push(") ORDER BY uri, expect, rowid");
            let rows: Vec<(String, String, String, String, String, String)> =
                query.build_query_as().fetch_all(pool).await?;
            for (uri, expect, code, severity, message, path) in rows {
                lints.entry((uri, expect)).or_default().push(LintRow {
                    code,
                    severity,
                    message,
                    path,
                });
            }
        }
        for (key, role, uri, expect, status, kind, signature, error, fetched_at, projection) in
            linked
        {
            let found = lints
                .get(&(uri.clone(), expect))
                .cloned()
                .unwrap_or_default();
            out.entry(key).or_default().push(DocumentRow {
                role,
                uri,
                status,
                kind,
                signature,
                error,
                fetched_at,
                projection,
                lints: found,
            });
        }
    }
    Ok(out)
}
