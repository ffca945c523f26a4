//! Stored reputation evaluations of many agents at once, for the evaluation DataLoader: the
//! JSON behind `reputation { components … trust … feedbackEvidence … }`, read only when a query
//! asks for those fields (a page of scores never reads it).

use agentindex_indexer::schema::agent_reputation;
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// The stored evaluation text of each of `keys` that has one.
pub(crate) async fn of_agents(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for chunk in keys.chunks(500) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {key}, {} FROM {} WHERE {key}",
            agent_reputation::evaluation,
            agent_reputation::NAME,
            key = agent_reputation::agent_key,
        ));
        push_in(&mut query, chunk.iter().cloned());
        let rows: Vec<(String, String)> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        out.extend(rows);
    }
    Ok(out)
}
