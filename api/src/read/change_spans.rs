//! Where each kind of change is stored, and how far a run of blocks may reach for the change
//! feed to hold a bounded number of changes at once. A backfill's end moves a chain's published
//! block from its start to its head in one step (reputation is settled only then): read whole,
//! that run is every agent, score and payment of the backfill in memory at once. Also the
//! payment rows the change reads' tests share.

use super::changes::Kind;
use agentindex_indexer::schema::{agent_reputation, agents, payments};
use agentindex_indexer::store::Dialect;
use sqlx::{AnyPool, QueryBuilder};

impl Kind {
    /// The table holding this kind of change and the column of the block it happened in. A
    /// chain's changes of each kind are indexed by (chain, block) (`0016_replay_order.sql`).
    pub(crate) fn stored_in(self) -> (&'static str, &'static str) {
        match self {
            Kind::Agents => (agents::NAME, agents::last_event_block.name),
            Kind::Reputation => (agent_reputation::NAME, agent_reputation::as_of_block.name),
            Kind::Payments => (payments::NAME, payments::block_number.name),
        }
    }
}

/// The last block of a run of `chain_id`'s blocks starting after `after`, at most `up_to`,
/// holding at most `rows` changes of each kind, save when one block alone holds more (that
/// block is the run). Each kind costs one range scan of at most `rows` + 1 index entries.
pub(crate) async fn span_end(
    pool: &AnyPool,
    chain_id: i64,
    after: i64,
    up_to: i64,
    rows: i64,
) -> sqlx::Result<i64> {
    let mut end = up_to;
    for kind in [Kind::Agents, Kind::Reputation, Kind::Payments] {
        if let Some(block) = block_past(pool, kind, chain_id, after, up_to, rows).await? {
            end = end.min((block - 1).max(after + 1));
        }
    }
    Ok(end)
}

/// The block of the change of `kind` that comes after the first `rows` of `(after, up_to]`, if
/// there are more.
async fn block_past(
    pool: &AnyPool,
    kind: Kind,
    chain_id: i64,
    after: i64,
    up_to: i64,
    rows: i64,
) -> sqlx::Result<Option<i64>> {
    let (table, block) = kind.stored_in();
    let mut query = QueryBuilder::new(format!("SELECT {block} FROM {table} WHERE chain_id = "));
    query.push_bind(chain_id);
    query.push(format!(" AND {block} > "));
    query.push_bind(after);
    query.push(format!(" AND {block} <= "));
    query.push_bind(up_to);
    query.push(format!(" ORDER BY {block} LIMIT 1 OFFSET "));
    query.push_bind(rows);
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_scalar()
        .fetch_optional(pool)
        .await
}

/// For tests: payments `(chain, block, log index, agent)` inserted as the writer leaves them.
#[cfg(test)]
pub(crate) async fn insert_test_payments(pool: &AnyPool, rows: &[(i64, i64, i64, String)]) {
    let mut insert = sqlx::QueryBuilder::<sqlx::Any>::new(format!(
        "INSERT INTO {} (chain_id, block_number, log_index, agent_key, tx_hash, token, payer,
           payee, amount, eip3009, timestamp) ",
        agentindex_indexer::schema::payments::NAME
    ));
    insert.push_values(rows, |mut row, (chain, block, log_index, agent)| {
        row.push_bind(*chain)
            .push_bind(*block)
            .push_bind(*log_index)
            .push_bind(agent.clone())
            .push_bind(format!("0x{block:032x}{log_index:032x}"))
            .push_bind("0x0")
            .push_bind("0xpayer")
            .push_bind("0xpayee")
            .push_bind("1")
            .push_bind(false)
            .push_bind(12);
    });
    insert.build().execute(pool).await.unwrap();
}

#[cfg(test)]
mod tests {
    //! Runs measured over a real SQLite store's payments.

    use super::*;
    use agentindex_indexer::store::Store;

    const CHAIN: i64 = 7;

    /// Payments at `blocks`, one row each.
    async fn pay(pool: &AnyPool, blocks: &[i64]) {
        let rows: Vec<_> = (0..)
            .zip(blocks)
            .map(|(i, block)| (CHAIN, *block, i, "a".to_string()))
            .collect();
        insert_test_payments(pool, &rows).await;
    }

    #[tokio::test]
    async fn a_run_ends_before_the_block_that_would_take_it_past_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("spans.db").display());
        let store = Store::open(&url).await.unwrap();
        let pool = AnyPool::connect(&url).await.unwrap();
        // Ten payments a block in blocks 1 to 250, then thirty in block 300.
        let mut blocks: Vec<i64> = (1..=250).flat_map(|b| [b; 10]).collect();
        blocks.extend([300; 30]);
        pay(&pool, &blocks).await;
        // The 1,001st payment is in block 101.
        assert_eq!(span_end(&pool, CHAIN, 0, 400, 1_000).await.unwrap(), 100);
        assert_eq!(span_end(&pool, CHAIN, 95, 400, 1_000).await.unwrap(), 195);
        // Fewer than the rows left: the run reaches the end.
        assert_eq!(span_end(&pool, CHAIN, 0, 250, 5_000).await.unwrap(), 250);
        // Another chain's changes do not count.
        assert_eq!(span_end(&pool, CHAIN + 1, 0, 400, 10).await.unwrap(), 400);
        // Block 300 alone holds more than 10: the run stops short of it, then is that block.
        assert_eq!(span_end(&pool, CHAIN, 250, 400, 10).await.unwrap(), 299);
        assert_eq!(span_end(&pool, CHAIN, 299, 400, 10).await.unwrap(), 300);
        pool.close().await;
        store.close().await;
    }
}
