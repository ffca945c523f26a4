//! An agent's rows of `agent_postings`: the words of its search row with their weights
//! (`documents::search_postings`), written whenever the search row is, under the agent's
//! number in `search_agents` (given the first time, kept after).

use crate::documents::search_postings::{SearchText, postings};
use crate::schema::{agent_postings, agents, search_agents};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Rows per INSERT (three values each, well under either database's limit).
const ROWS_PER_INSERT: usize = 500;

/// Replaces the postings of agent `key` with those of `text`.
pub(super) async fn write(
    conn: &mut AnyConnection,
    key: &str,
    text: SearchText<'_>,
) -> StoreResult<()> {
    let doc = number(conn, key).await?;
    sqlx::query(&format!(
        "DELETE FROM {} WHERE doc = $1",
        agent_postings::NAME
    ))
    .bind(doc)
    .execute(&mut *conn)
    .await
    .context("clearing an agent's search postings")?;
    for chunk in postings(text).chunks(ROWS_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${}, ${})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
            .collect();
        let sql = format!(
            "INSERT INTO {} (doc, term, weight) VALUES {}",
            agent_postings::NAME,
            values.join(", ")
        );
        let mut insert = sqlx::query(&sql);
        for (term, weight) in chunk {
            insert = insert.bind(doc).bind(term).bind(*weight);
        }
        insert
            .execute(&mut *conn)
            .await
            .context("writing an agent's search postings")?;
    }
    Ok(())
}

/// Agent `key`'s number in `search_agents`, given one past the highest if it has none.
async fn number(conn: &mut AnyConnection, key: &str) -> StoreResult<i64> {
    let table = search_agents::NAME;
    let found: Option<i64> =
        sqlx::query_scalar(&format!("SELECT doc FROM {table} WHERE agent_key = $1"))
            .bind(key)
            .fetch_optional(&mut *conn)
            .await
            .context("reading an agent's search number")?;
    if let Some(doc) = found {
        return Ok(doc);
    }
    sqlx::query_scalar(&format!(
        "INSERT INTO {table} (doc, agent_key)
         SELECT coalesce(max(doc), 0) + 1, $1 FROM {table} RETURNING doc"
    ))
    .bind(key)
    .fetch_one(&mut *conn)
    .await
    .context("numbering an agent for search")
}

/// Removes the postings and numbers of agents no longer in `agents`.
pub(super) async fn remove_gone(conn: &mut AnyConnection) -> StoreResult<()> {
    let (docs, agents_table) = (search_agents::NAME, agents::NAME);
    sqlx::query(&format!(
        "DELETE FROM {} WHERE doc IN (SELECT doc FROM {docs}
           WHERE agent_key NOT IN (SELECT agent_key FROM {agents_table}))",
        agent_postings::NAME
    ))
    .execute(&mut *conn)
    .await
    .context("removing search postings of agents that are gone")?;
    sqlx::query(&format!(
        "DELETE FROM {docs} WHERE agent_key NOT IN (SELECT agent_key FROM {agents_table})"
    ))
    .execute(&mut *conn)
    .await
    .context("removing search numbers of agents that are gone")?;
    Ok(())
}
