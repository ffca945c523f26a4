//! The follower behind a hosted provider, emulated on loopback (`agentindex-emulator`): for
//! every provider wording collected, with a 5-block range cap, a result cap, a rate limit the
//! indexer exceeds (429 storms) and random faults, the index ends equal to a clean run's, by
//! address chunks and by scans alike, with ranges read one at a time or four ahead.

use crate::support;

use agentindex_contracts::Devnet;
use agentindex_contracts::workload::{self, Workload};
use agentindex_emulator::{Emulator, Limits, Provider};
use agentindex_indexer::config::FetchStrategy;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Logs one answer may hold: more than any single block of the workload holds for one request
/// (a round's registrations, 200), fewer than a few of its blocks together.
const RESULT_CAP: usize = 250;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_providers_refusals_leave_the_index_equal_to_a_clean_run() {
    let devnet = Devnet::start().await.unwrap();
    workload::seed(&devnet, Workload::small(2)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clean_db = dir.path().join("clean.db");
    support::index_until_synced(&support::config(&devnet, &clean_db, 0)).await;
    let clean = support::dump(&clean_db).await;
    assert!(
        clean.lines().count() > 1_000,
        "the clean run holds the workload"
    );

    let mut result_refusals = 0;
    for (turn, provider) in Provider::ALL.into_iter().enumerate() {
        let strategy = match turn % 2 {
            0 => FetchStrategy::Scan,
            _ => FetchStrategy::Addresses,
        };
        let ranges_in_flight = match turn % 4 < 2 {
            true => 4,
            false => 1,
        };
        let limits = Limits {
            latency: Duration::from_millis(2),
            requests_per_second: Some(200),
            burst: Some(2),
            max_block_range: Some(5),
            max_results: Some(RESULT_CAP),
            provider,
            fault_rate: 0.03,
            stall: Duration::from_millis(1_500),
            seed: turn as u64,
            api_key: None,
        };
        let emulator = Emulator::start(&devnet.endpoint(), limits).await.unwrap();
        let db = dir.path().join(format!("{provider:?}.db"));
        let mut config = support::config(&devnet, &db, 0);
        config.chains[0].rpc = vec![emulator.url().to_string()];
        config.chains[0].request_timeout_secs = 1;
        config.chains[0].requests_per_second = 400;
        config.chains[0].fetch_strategy = strategy;
        config.chains[0].ranges_in_flight = ranges_in_flight;
        support::index_until_synced(&config).await;

        let counters = emulator.counters();
        support::assert_same_index(
            &support::dump(&db).await,
            &clean,
            &format!("behind {provider:?} ({strategy:?}, {ranges_in_flight} ranges at once)"),
        );
        assert!(
            counters.range_refusals.load(Ordering::Relaxed) > 0,
            "{provider:?}: no range was refused: {}",
            counters.to_json()
        );
        assert!(
            counters.rate_limited.load(Ordering::Relaxed) > 0,
            "{provider:?}: never over the rate: {}",
            counters.to_json()
        );
        result_refusals += counters.result_refusals.load(Ordering::Relaxed);
    }
    assert!(
        result_refusals > 0,
        "no answer was ever refused for its size"
    );
}
