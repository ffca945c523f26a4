//! Skills of many agents at once, for the skills DataLoader.

use agentindex_indexer::schema::agent_skills;
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// One skill as discovery shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillRow {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) tags: Vec<String>,
}

/// The skills of each of `keys`, in skill-id order.
pub(crate) async fn of_agents(
    pool: &AnyPool,
    keys: &[String],
) -> sqlx::Result<HashMap<String, Vec<SkillRow>>> {
    let mut out: HashMap<String, Vec<SkillRow>> = HashMap::new();
    for chunk in keys.chunks(500) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {} WHERE {}",
            agent_skills::TABLE.column_list(),
            agent_skills::NAME,
            agent_skills::agent_key
        ));
        push_in(&mut query, chunk.iter().cloned());
        query.push(format!(
            "ORDER BY {}, {}",
            agent_skills::agent_key,
            agent_skills::skill_id
        ));
        let rows: Vec<agent_skills::Row> = Dialect::of_pool(pool)
            .portable(query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for row in rows {
            let tags =
                serde_json::from_str(&row.tags).map_err(|error| sqlx::Error::ColumnDecode {
                    index: agent_skills::tags.qualified(),
                    source: Box::new(error),
                })?;
            out.entry(row.agent_key).or_default().push(SkillRow {
                id: row.skill_id,
                name: row.name,
                description: row.description,
                tags,
            });
        }
    }
    Ok(out)
}
