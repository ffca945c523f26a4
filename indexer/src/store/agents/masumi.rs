//! Current state of Masumi agents: their registry actions read in chain order and folded
//! (`crate::agents::masumi`) into the `agents` row and the `masumi_agents` row beside it.

use super::{cardano_facts_of, write};
use crate::agents::masumi::{MasumiAction, MasumiDetails, fold};
use crate::schema::{masumi_agents, masumi_registry_actions};
use crate::store::sql::delete_agent_rows;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// One stored action, with its agent.
#[derive(sqlx::FromRow)]
struct ActionRow {
    agent_key: String,
    block_number: i64,
    tx_index: i64,
    block_timestamp: i64,
    policy_id: String,
    registry_version: i64,
    asset_name: String,
    action: String,
    holder: Option<String>,
    metadata: Option<String>,
    metadata_error: Option<String>,
}

/// Recomputes the Masumi agents `keys` of chain `chain_id`, removing those left with no mint.
pub(super) async fn refresh(
    conn: &mut AnyConnection,
    chain_id: u64,
    keys: &[String],
) -> StoreResult<()> {
    let rows: Vec<ActionRow> = cardano_facts_of(
        conn,
        masumi_registry_actions::NAME,
        "agent_key",
        "block_number, tx_index, block_timestamp, policy_id, registry_version, asset_name, action,
         holder, metadata, metadata_error",
        keys,
        "reading Masumi registry actions",
    )
    .await?;
    let mut by_agent: BTreeMap<String, Vec<MasumiAction>> = BTreeMap::new();
    for row in rows {
        by_agent
            .entry(row.agent_key)
            .or_default()
            .push(MasumiAction {
                block: row.block_number,
                tx_index: row.tx_index,
                timestamp: row.block_timestamp,
                policy_id: row.policy_id,
                registry_version: row.registry_version,
                asset_name: row.asset_name,
                action: row.action,
                holder: row.holder,
                metadata: row.metadata,
                metadata_error: row.metadata_error,
            });
    }
    let mut computed = Vec::new();
    let mut details = Vec::new();
    let mut gone = Vec::new();
    for key in keys {
        match by_agent.get(key).and_then(|actions| fold(key, actions)) {
            Some((state, detail)) => {
                details.push((key.clone(), detail));
                computed.push(state);
            }
            None => gone.push(key.clone()),
        }
    }
    write(conn, chain_id, &computed, &gone).await?;
    delete_agent_rows(
        conn,
        masumi_agents::NAME,
        keys,
        "replacing Masumi agents' registry rows",
    )
    .await?;
    write_details(conn, &details).await
}

async fn write_details(
    conn: &mut AnyConnection,
    details: &[(String, MasumiDetails)],
) -> StoreResult<()> {
    if details.is_empty() {
        return Ok(());
    }
    let columns = masumi_agents::TABLE.column_list();
    let mut insert =
        QueryBuilder::<Any>::new(format!("INSERT INTO {} ({columns}) ", masumi_agents::NAME));
    insert.push_values(details, |mut row, (key, d)| {
        row.push_bind(key)
            .push_bind(&d.unit)
            .push_bind(&d.policy_id)
            .push_bind(&d.asset_name)
            .push_bind(d.registry_version)
            .push_bind(&d.metadata)
            .push_bind(&d.raw_metadata)
            .push_bind(&d.lints)
            .push_bind(&d.metadata_error)
            .push_bind(d.deregistered_block)
            .push_bind(d.updates);
    });
    Dialect::of(conn)
        .portable(insert)
        .build()
        .execute(&mut *conn)
        .await
        .context("writing Masumi agents' registry rows")?;
    Ok(())
}
