//! Documents read on a real SQLite store.

use super::*;
use agentindex_indexer::store::Store;

/// One agent linked to more documents than one statement's bound values can name (9,000, each
/// two values, padded to a power of two): every document comes back, and the lints of documents
/// on either side of a statement's boundary with it.
#[tokio::test]
async fn an_agent_with_thousands_of_documents_gets_all_of_them_and_their_lints() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("documents.db").display());
    let _store = Store::open(&url).await.unwrap();
    let pool = AnyPool::connect(&url).await.unwrap();
    sqlx::query(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 8999)
         INSERT INTO {} (agent_key, role, uri, expect)
         SELECT 'agent', 'feedback', printf('https://f.example/%05d', i), 'json' FROM n",
        agent_documents::NAME
    ))
    .execute(&pool)
    .await
    .unwrap();
    for (n, position) in [(17, 0), (8_500, 0), (8_500, 1)] {
        sqlx::query(&format!(
            "INSERT INTO {} (uri, expect, code, severity, message, path, position)
             VALUES (printf('https://f.example/%05d', ?), 'json', ?, 'warning', 'm', '/', ?)",
            document_lints::NAME
        ))
        .bind(n)
        .bind(format!("code{position}"))
        .bind(position)
        .execute(&pool)
        .await
        .unwrap();
    }
    let documents = of_agents(&pool, &["agent".to_string()]).await.unwrap();
    let rows = &documents["agent"];
    assert_eq!(rows.len(), 9_000);
    let codes = |uri: &str| -> Vec<String> {
        rows.iter()
            .find(|row| row.uri == uri)
            .unwrap()
            .lints
            .iter()
            .map(|lint| lint.code.clone())
            .collect()
    };
    assert_eq!(codes("https://f.example/00017"), ["code0"]);
    assert_eq!(codes("https://f.example/08500"), ["code0", "code1"]);
    assert!(codes("https://f.example/08999").is_empty());
}
