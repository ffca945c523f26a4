//! A canonical text dump of everything derived from the chain, for comparing two databases:
//! one line per row, tables and rows in a fixed order. Progress bookkeeping (cursor heads, the
//! reorg window) is left out because it depends on when the chain was watched, not on the chain.

use super::stages::Stage;
use super::{QueryContext, StoreResult};
use sqlx::any::AnyTypeInfoKind;
use sqlx::{AnyPool, Column, Row, ValueRef};

/// Derived tables and the order their rows are dumped in.
const DERIVED: [(&str, &str); 7] = [
    ("agents", "agent_key"),
    ("agent_activity", "agent_key"),
    ("agent_reputation", "agent_key"),
    (
        "counted_payments",
        "chain_id, agent_key, block_number, log_index",
    ),
    ("trust_epochs", "chain_id"),
    ("trust_agents", "agent_key"),
    ("trust_payers", "chain_id, address"),
];

/// Every fact table, the agents, their reputation and the trust rank, rendered as text.
pub async fn canonical(pool: &AnyPool) -> StoreResult<String> {
    let mut out = String::new();
    let tables = Stage::Facts
        .tables()
        .iter()
        .map(|table| (*table, "chain_id, block_number, log_index"))
        .chain(DERIVED);
    for (table, order) in tables {
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
