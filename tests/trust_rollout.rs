//! A new trust rank going into force group by group (issue #36), through the real store and
//! writer on SQLite: synthetic paid agents written straight into the database (the benchmarks'
//! `examples/support/agents.rs`), settled block by block across an epoch as the indexer at the
//! tip does, against fresh copies settled once at the same block.

#[path = "../examples/support/agents.rs"]
pub(crate) mod agents;

use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::{ChainContext, Store, StoreRead};
use sqlx::any::AnyPoolOptions;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Agents, and payments each (one in each thousand blocks from block 1,001 to about 3,031: the
/// rank as of 3,000 sees two of each agent's payments, the one as of 4,000 all three).
const AGENTS: usize = 300;
const PAYMENTS_EACH: usize = 3;
/// Payers, each paying many of the agents.
const PAYERS: usize = 40;

fn rules() -> ReputationRules {
    let mut rules = agents::rules();
    rules.trust.interval_blocks = 1_000;
    rules.trust.rollout_blocks = 320;
    rules
}

/// A store of the synthetic agents at `path`, every agent scored once (their counted payments
/// recorded), as the indexer leaves them before its first settle.
async fn filled(path: &Path) -> (Store, Vec<String>) {
    let url = format!("sqlite://{}", path.display());
    let store = Store::open(&url).await.unwrap();
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    let keys = agents::fill_paid(&pool, AGENTS, false, PAYMENTS_EACH)
        .await
        .unwrap();
    // Forty payers each paying agents across the set, so the rank has broad payers to seed it.
    let payments: Vec<(i64, i64)> =
        sqlx::query_as("SELECT block_number, log_index FROM payments ORDER BY 1, 2")
            .fetch_all(&pool)
            .await
            .unwrap();
    let mut tx = pool.begin().await.unwrap();
    for (n, (block, log_index)) in payments.iter().enumerate() {
        sqlx::query("UPDATE payments SET payer = $1 WHERE block_number = $2 AND log_index = $3")
            .bind(format!("0x{:040x}", 0xb0_0000 + n % PAYERS))
            .bind(block)
            .bind(log_index)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    pool.close().await;
    let chain = Arc::new(agents::chain_context(rules()));
    store.writer(2).rescore(chain, keys.clone()).await.unwrap();
    (store, keys)
}

/// The trust epoch each agent's stored row was scored under (agents without trust left out).
async fn epochs_scored_under(store: &Store) -> BTreeMap<String, u64> {
    let mut rows = Vec::new();
    store
        .stored_reputations(agents::CHAIN, |page| rows.extend(page))
        .await
        .unwrap();
    rows.into_iter()
        .filter_map(|row| {
            let evaluation: serde_json::Value = serde_json::from_str(&row.evaluation).unwrap();
            let epoch = evaluation["trust"]["epoch_block"].as_u64()?;
            Some((row.agent, epoch))
        })
        .collect()
}

/// A fresh copy of the agents settled once at `head`, dumped.
async fn fresh_dump(dir: &Path, head: u64) -> String {
    let (store, _) = filled(&dir.join(format!("fresh-{head}.db"))).await;
    let chain = Arc::new(agents::chain_context(rules()));
    store
        .writer(2)
        .settle_reputation(chain, head)
        .await
        .unwrap();
    let dump = store.canonical_dump().await.unwrap();
    store.close().await;
    dump
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_rank_goes_into_force_group_by_group_with_the_floats_of_a_single_settle() {
    let dir = tempfile::tempdir().unwrap();
    let (live, _) = filled(&dir.path().join("live.db")).await;
    let rules = rules();
    let chain: Arc<ChainContext> = Arc::new(agents::chain_context(rules.clone()));
    let writer = live.writer(2);
    writer
        .settle_reputation(chain.clone(), 3_999)
        .await
        .unwrap();
    let before = epochs_scored_under(&live).await;
    assert!(before.len() > AGENTS / 2, "the rank trusts most agents");
    assert!(before.values().all(|epoch| *epoch == 3_000));

    // Crossing the epoch asks for its rank, computed ahead once the settle is committed; no
    // agent goes over yet.
    writer
        .settle_reputation(chain.clone(), 4_000)
        .await
        .unwrap();
    assert_eq!(
        format!("{:?}", chain.ranks_ahead),
        "RanksAhead { epoch: Some(4000), used: 0 }"
    );
    assert_eq!(epochs_scored_under(&live).await, before);

    let mut went_over_at = BTreeMap::new();
    for head in [
        4_008, 4_009, 4_010, 4_011, 4_100, 4_160, 4_319, 4_320, 4_321,
    ] {
        writer.settle_reputation(chain.clone(), head).await.unwrap();
        let scored = epochs_scored_under(&live).await;
        for (key, epoch) in &scored {
            assert_eq!(
                *epoch,
                rules.trust.epoch_in_force_for(key, head),
                "{key} at block {head}"
            );
            if *epoch == 4_000 {
                went_over_at.entry(key.clone()).or_insert(head);
            }
        }
        if head == 4_009 {
            // Stored the block before the first group goes over, from the computation ahead.
            assert_eq!(
                format!("{:?}", chain.ranks_ahead),
                "RanksAhead { epoch: None, used: 1 }"
            );
            assert_eq!(
                scored, before,
                "no agent goes over before its group's block"
            );
        }
        if head == 4_160 {
            let over = scored.values().filter(|e| **e == 4_000).count();
            assert!(
                over > 0 && over < scored.len(),
                "half way through the rollout some agents went over, not all ({over} of {})",
                scored.len()
            );
            assert_eq!(
                live.canonical_dump().await.unwrap(),
                fresh_dump(dir.path(), head).await,
                "half way through the rollout, the index differs from one settled once there"
            );
        }
    }
    assert_eq!(
        went_over_at.len(),
        before.len(),
        "every trusted agent went over"
    );
    assert!(went_over_at.values().any(|head| *head == 4_010));
    assert!(went_over_at.values().any(|head| *head == 4_320));
    assert_eq!(
        live.canonical_dump().await.unwrap(),
        fresh_dump(dir.path(), 4_321).await,
        "after the rollout, the index differs from one settled once there"
    );
    live.close().await;
}
