//! A canonical text dump of everything derived from the chain, for comparing two databases:
//! one line per row, tables and rows in a fixed order. Progress bookkeeping (cursor heads, the
//! reorg window) is left out because it depends on when the chain was watched, not on the chain.

use super::stages::{STAGES, Stage};
use super::{QueryContext, StoreResult};
use crate::schema::{
    self, reputation_dirty, reputation_feed_pages, reputation_feeds, reputation_rules,
};
use sqlx::any::AnyTypeInfoKind;
use sqlx::{AnyPool, Column, Row, ValueRef};

/// Tables of the derived stages that are bookkeeping rather than a function of the chain: the
/// marks of agents still to rescore (cleared when reputation settles, so they depend on when
/// it did), the rules recorded, and the feeds stored at epoch boundaries (kept as the feed
/// keeper passes them).
const NOT_CANONICAL: [&str; 4] = [
    reputation_dirty::NAME,
    reputation_rules::NAME,
    reputation_feeds::NAME,
    reputation_feed_pages::NAME,
];

/// The tables dumped, each with the order its rows are dumped in: the fact tables by block and
/// log (or their key, where they have no log), then every table of the stages derived from them (the cursor's bookkeeping left out) by
/// its declared key.
fn dumped() -> Vec<(&'static str, String)> {
    // EVM facts by block and log; Cardano's (no logs) by their declared key.
    let facts = Stage::Facts.tables().iter().map(|table| {
        let key = schema::table(table).map_or(&[][..], |t| t.key);
        let order = if key.contains(&"log_index") {
            "chain_id, block_number, log_index".to_string()
        } else {
            key.join(", ")
        };
        (*table, order)
    });
    let derived = STAGES
        .iter()
        .filter(|stage| !matches!(stage, Stage::Facts | Stage::Cursor))
        .flat_map(|stage| stage.tables().iter())
        .filter(|table| !NOT_CANONICAL.contains(table))
        .map(|table| {
            let key = schema::table(table).map_or_else(Vec::new, |t| t.key.to_vec());
            (*table, key.join(", "))
        });
    facts.chain(derived).collect()
}

/// Every fact table, the agents, their activity, their reputation and the trust rank, rendered
/// as text.
pub async fn canonical(pool: &AnyPool) -> StoreResult<String> {
    let mut out = String::new();
    for (table, order) in dumped() {
        out.push_str(&format!("== {table}\n"));
        let rows = sqlx::query(&format!("SELECT * FROM {table} ORDER BY {order}, 1"))
            .fetch_all(pool)
            .await
            .context("dumping a table")?;
        for row in rows {
            let cells = (0..row.columns().len())
                .map(|i| cell(&row, i))
                .collect::<StoreResult<Vec<String>>>()?;
            out.push_str(&cells.join(" | "));
            out.push('\n');
        }
    }
    Ok(out)
}

/// One cell as `column=value`, read as the type the database stored it with (a flag as the
/// integer SQLite keeps it as).
fn cell(row: &sqlx::any::AnyRow, index: usize) -> StoreResult<String> {
    let name = row.columns()[index].name();
    let raw = row.try_get_raw(index).context("dumping a cell")?;
    if raw.is_null() {
        return Ok(format!("{name}=NULL"));
    }
    let value = match raw.type_info().kind() {
        AnyTypeInfoKind::SmallInt | AnyTypeInfoKind::Integer | AnyTypeInfoKind::BigInt => row
            .try_get::<i64, _>(index)
            .context("dumping an integer")?
            .to_string(),
        AnyTypeInfoKind::Bool => {
            i64::from(row.try_get::<bool, _>(index).context("dumping a flag")?).to_string()
        }
        AnyTypeInfoKind::Blob => format!(
            "0x{}",
            alloy::primitives::hex::encode(
                row.try_get::<Vec<u8>, _>(index).context("dumping a blob")?
            )
        ),
        AnyTypeInfoKind::Real | AnyTypeInfoKind::Double => row
            .try_get::<f64, _>(index)
            .context("dumping a real")?
            .to_string(),
        _ => row.try_get::<String, _>(index).context("dumping text")?,
    };
    Ok(format!("{name}={value}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{agent_activity, agents, events, trust_payers};

    #[test]
    fn the_dump_takes_every_derived_stage_table_but_the_bookkeeping() {
        let dumped = dumped();
        let order = |name: &str| {
            dumped
                .iter()
                .find(|(table, _)| *table == name)
                .map(|(_, order)| order.clone())
        };
        assert_eq!(
            order(events::NAME).as_deref(),
            Some("chain_id, block_number, log_index")
        );
        assert_eq!(order(agents::NAME).as_deref(), Some("agent_key"));
        assert_eq!(order(agent_activity::NAME).as_deref(), Some("agent_key"));
        assert_eq!(
            order(trust_payers::NAME).as_deref(),
            Some("chain_id, epoch_block, address")
        );
        for table in NOT_CANONICAL {
            assert_eq!(order(table), None, "{table} is bookkeeping");
        }
        assert_eq!(order(crate::schema::chain_cursor::NAME), None);
    }
}
