//! What the Cardano follower reads back from the store: how far down each followed policy's
//! list of runs it is.

use super::decode::{self, int};
use super::{QueryContext, StoreResult};
use crate::schema::cardano_script_runs;
use sqlx::AnyPool;
use std::collections::BTreeMap;

/// How many runs of each policy `chain_id`'s follower has read (the rows a rollback left).
pub(super) async fn script_runs(
    pool: &AnyPool,
    chain_id: u64,
) -> StoreResult<BTreeMap<String, u64>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(&format!(
        "SELECT script, count(*) FROM {table} WHERE chain_id = $1 GROUP BY script",
        table = cardano_script_runs::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .fetch_all(pool)
    .await
    .context("counting the policy runs read")?;
    rows.into_iter()
        .map(|(script, count)| {
            Ok((
                script,
                decode::uint(cardano_script_runs::NAME, "count", count)?,
            ))
        })
        .collect()
}
