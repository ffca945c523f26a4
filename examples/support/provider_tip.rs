//! The provider benchmark's tip pass: agentindex following a chain that makes a block every
//! 2 s, with the requests, compute units and lag it costs per block.

use crate::provider_setup::{
    PAYMENTS_PER_BLOCK, Settings, TRAFFIC_PER_BLOCK, config, devnet, indexed, served,
    start_agentindex,
};
use agentindex_contracts::Devnet;
use agentindex_contracts::network_load::{fund_payers, seed_wallet_agents, send_block_traffic};
use agentindex_emulator::Emulator;
use agentindex_indexer::store::Store;
use alloy::primitives::Address;
use alloy::providers::Provider;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) struct TipRun {
    pub(crate) agents: u64,
    pub(crate) blocks: u64,
    pub(crate) get_logs: u64,
    pub(crate) requests: u64,
    pub(crate) compute_units: u64,
    pub(crate) rate_limited: u64,
    pub(crate) max_lag: u64,
    pub(crate) mean_lag: f64,
    pub(crate) catch_up: Duration,
}

/// Sends each new block's traffic until dropped.
fn traffic(devnet: &Devnet, wallets: Vec<Address>) -> tokio::task::JoinHandle<()> {
    let seeder = devnet.seeder();
    let provider = devnet.provider().clone();
    tokio::spawn(async move {
        let mut last = 0;
        let mut salt = 1u64 << 32;
        loop {
            let head = provider.get_block_number().await.unwrap_or(last);
            if head != last {
                last = head;
                salt += 1;
                let payees: Vec<Address> = (0..PAYMENTS_PER_BLOCK)
                    .map(|i| wallets[(salt as usize * 7919 + i * 104_729) % wallets.len()])
                    .collect();
                if let Err(error) =
                    send_block_traffic(&seeder, TRAFFIC_PER_BLOCK, salt, &payees).await
                {
                    eprintln!("traffic: {error}");
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

pub(crate) async fn tip(settings: &Settings, agents: u64, dir: &Path) -> anyhow::Result<TipRun> {
    let devnet = devnet().await?;
    fund_payers(&devnet).await?;
    let seeding = Instant::now();
    let wallets = seed_wallet_agents(&devnet, agents).await?;
    eprintln!(
        "tip {agents}: seeded {} agents in {:.1?}",
        wallets.len(),
        seeding.elapsed()
    );
    let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("evm_setIntervalMining".into(), (2,))
        .await?;
    let sender = traffic(&devnet, wallets);
    let db = dir.join(format!("tip-{agents}.db"));
    let config_path = dir.join(format!("tip-{agents}.toml"));
    std::fs::write(
        &config_path,
        config(&devnet, emulator.url(), &db, settings.rps, 4),
    )?;
    // Created and migrated here first: two processes migrating one new file at once collide.
    let store = Store::open(&format!("sqlite://{}", db.display())).await?;
    let mut tied = start_agentindex(&settings.binary, &config_path, false)?;
    let child = tied.child();
    let chain = devnet.chain_id();
    let started = Instant::now();
    while indexed(&store, chain).await + 1 < devnet.block_number().await? {
        anyhow::ensure!(child.try_wait()?.is_none(), "agentindex exited");
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(3_600),
            "not caught up within an hour"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let catch_up = started.elapsed();
    let (head0, served0) = (devnet.block_number().await?, served(&emulator));
    let window = Instant::now();
    let (mut max_lag, mut lag_sum, mut samples) = (0u64, 0u64, 0u64);
    while window.elapsed() < settings.tip {
        let lag = devnet
            .block_number()
            .await?
            .saturating_sub(indexed(&store, chain).await);
        max_lag = max_lag.max(lag);
        lag_sum += lag;
        samples += 1;
        anyhow::ensure!(child.try_wait()?.is_none(), "agentindex exited");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (head1, served1) = (devnet.block_number().await?, served(&emulator));
    sender.abort();
    tied.stop()?;
    store.close().await;
    Ok(TipRun {
        agents,
        blocks: head1 - head0,
        get_logs: served1[0] - served0[0],
        requests: served1[1] - served0[1],
        compute_units: served1[2] - served0[2],
        rate_limited: served1[3] - served0[3],
        max_lag,
        mean_lag: lag_sum as f64 / samples.max(1) as f64,
        catch_up,
    })
}
