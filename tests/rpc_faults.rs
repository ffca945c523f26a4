//! The index completes, and equals a clean run, behind an endpoint that rate-limits, stalls,
//! drops connections and refuses wide log ranges in every known wording; and with the first of
//! two endpoints dead it runs on the second.

use crate::support;

use agentindex_contracts::Devnet;
use agentindex_contracts::workload::{self, Workload};
use std::sync::atomic::Ordering;
use std::time::Duration;

async fn clean_dump(devnet: &Devnet, dir: &std::path::Path) -> String {
    let db = dir.join("clean.db");
    support::index_until_synced(&support::config(devnet, &db, 0)).await;
    support::dump(&db).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faulty_endpoint_still_yields_the_clean_index() {
    let devnet = Devnet::start().await.unwrap();
    workload::seed(&devnet, Workload::small(2)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clean = clean_dump(&devnet, dir.path()).await;

    let (proxy, counts) =
        support::faulty_rpc::start(devnet.endpoint(), 42, Duration::from_millis(1500)).await;
    let db = dir.path().join("faulty.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].rpc = vec![proxy];
    config.chains[0].request_timeout_secs = 1;
    config.chains[0].max_block_range = 64;
    support::index_until_synced(&config).await;

    support::assert_same_index(
        &support::dump(&db).await,
        &clean,
        "behind an endpoint with faults",
    );
    for (fault, count) in [
        ("429", &counts.rate_limited),
        ("timeout", &counts.timed_out),
        ("dropped connection", &counts.dropped),
        ("range too large with a hint", &counts.range_with_hint),
        ("range too large without a hint", &counts.range_without_hint),
        ("too many results", &counts.too_many),
    ] {
        assert!(
            count.load(Ordering::Relaxed) > 0,
            "the proxy never injected a {fault}: {counts:?}"
        );
    }
}

#[tokio::test]
async fn a_dead_first_endpoint_fails_over_to_the_second() {
    let devnet = Devnet::start().await.unwrap();
    workload::seed(&devnet, Workload::small(1)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clean = clean_dump(&devnet, dir.path()).await;

    // A port that was just free: nothing listens there.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let db = dir.path().join("failover.db");
    let mut config = support::config(&devnet, &db, 0);
    config.chains[0].rpc = vec![dead, devnet.endpoint()];
    support::index_until_synced(&config).await;
    support::assert_same_index(
        &support::dump(&db).await,
        &clean,
        "through the second endpoint",
    );
}
