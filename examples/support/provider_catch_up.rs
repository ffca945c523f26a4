//! The provider benchmark's catch-up pass: agentindex (ranges read ahead, then one at a time)
//! and Ponder indexing a seeded chain from nothing, next to the fewest `eth_getLogs` the
//! provider's caps allow.

use crate::provider_setup::{
    PAYMENTS_PER_BLOCK, RANGE_CAP, RESULT_CAP, Settings, TRAFFIC_PER_BLOCK, config, devnet, served,
    start_agentindex,
};
use crate::{memory, ponder};
use agentindex_contracts::network_load::{fund_payers, seed_wallet_agents, send_block_traffic};
use agentindex_contracts::{Devnet, TestUSDC};
use agentindex_emulator::Emulator;
use alloy::primitives::Address;
use alloy::providers::Provider;
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) struct CatchUp {
    pub(crate) agents: u64,
    pub(crate) blocks: u64,
    pub(crate) contract_logs: u64,
    pub(crate) token_logs: u64,
    /// agentindex with ranges read ahead (the default), then one range at a time.
    pub(crate) runs: Vec<(usize, Backfill)>,
    pub(crate) ponder: Option<(Duration, u64, u64)>,
}

/// One agentindex catch-up through a fresh emulator.
pub(crate) struct Backfill {
    pub(crate) elapsed: Duration,
    pub(crate) get_logs: u64,
    pub(crate) requests: u64,
    pub(crate) compute_units: u64,
    pub(crate) rate_limited: u64,
    pub(crate) peak_kib: u64,
}

/// Indexes the devnet from scratch through a fresh emulator, `ranges_in_flight` at once.
async fn backfill(
    settings: &Settings,
    devnet: &Devnet,
    dir: &Path,
    ranges_in_flight: usize,
) -> anyhow::Result<Backfill> {
    let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
    let db = dir.join(format!("catch-up-{ranges_in_flight}.db"));
    let config_path = dir.join(format!("catch-up-{ranges_in_flight}.toml"));
    std::fs::write(
        &config_path,
        config(devnet, emulator.url(), &db, settings.rps, ranges_in_flight),
    )?;
    let started = Instant::now();
    let mut tied = start_agentindex(&settings.binary, &config_path, true)?;
    let child = tied.child();
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        peak_kib = peak_kib.max(memory::peak_kib(&child.id().to_string()).unwrap_or(0));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let elapsed = started.elapsed();
    anyhow::ensure!(status.success(), "agentindex failed: {status}");
    let [get_logs, requests, compute_units, rate_limited] = served(&emulator);
    Ok(Backfill {
        elapsed,
        get_logs,
        requests,
        compute_units,
        rate_limited,
        peak_kib,
    })
}

impl CatchUp {
    /// The fewest `eth_getLogs` the caps allow for what agentindex needs: the configured
    /// contracts' logs and the token's transfers, each in ranges and answers no larger than
    /// the caps.
    pub(crate) fn minimum_get_logs(&self) -> u64 {
        let ranges = self.blocks.div_ceil(RANGE_CAP);
        let answers = |logs: u64| ranges.max(logs.div_ceil(RESULT_CAP as u64));
        answers(self.contract_logs) + answers(self.token_logs)
    }
}

pub(crate) async fn catch_up(settings: &Settings, dir: &Path) -> anyhow::Result<CatchUp> {
    let devnet = devnet().await?;
    fund_payers(&devnet).await?;
    let seeding = Instant::now();
    let wallets = seed_wallet_agents(&devnet, settings.agents).await?;
    for block in 0..settings.traffic_blocks {
        let payees: Vec<Address> = (0..PAYMENTS_PER_BLOCK)
            .map(|i| wallets[(block as usize * 7919 + i * 104_729) % wallets.len()])
            .collect();
        send_block_traffic(&devnet.seeder(), TRAFFIC_PER_BLOCK, block, &payees).await?;
    }
    // The traffic was sent without waiting: let anvil mine all of it before anything is timed.
    loop {
        let before = devnet.block_number().await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        if devnet.block_number().await? == before {
            break;
        }
    }
    let _: serde_json::Value = devnet
        .provider()
        .raw_request("anvil_mine".into(), ("0x23",))
        .await?;
    let head = devnet.block_number().await?;
    let start = devnet.deployment().start_block;
    eprintln!(
        "catch-up: {} agents and {} traffic blocks seeded into {head} blocks in {:.1?}",
        wallets.len(),
        settings.traffic_blocks,
        seeding.elapsed()
    );
    let (mut contract_logs, mut token_logs) = (0, 0);
    let mut from = start;
    while from <= head {
        let to = head.min(from + RANGE_CAP - 1);
        let d = devnet.deployment();
        let contracts = Filter::new()
            .address(vec![
                d.identity,
                d.reputation,
                d.validation,
                d.factory,
                d.registry,
                d.curated_registry,
            ])
            .from_block(from)
            .to_block(to);
        contract_logs += devnet.provider().get_logs(&contracts).await?.len() as u64;
        let filter = Filter::new()
            .address(devnet.deployment().usdc)
            .event_signature(vec![
                TestUSDC::Transfer::SIGNATURE_HASH,
                TestUSDC::AuthorizationUsed::SIGNATURE_HASH,
            ])
            .from_block(from)
            .to_block(to);
        token_logs += devnet.provider().get_logs(&filter).await?.len() as u64;
        from = to + 1;
    }

    let mut runs = Vec::new();
    for ranges_in_flight in [4, 1] {
        runs.push((
            ranges_in_flight,
            backfill(settings, &devnet, dir, ranges_in_flight).await?,
        ));
    }

    let ponder = if settings.ponder {
        let emulator = Emulator::start(&devnet.endpoint(), settings.limits()).await?;
        let run = ponder::run_through(&devnet, &[], emulator.url(), settings.rps, None).await?;
        let [_, requests, _, _] = served(&emulator);
        Some((run.elapsed, requests, run.events))
    } else {
        None
    };
    Ok(CatchUp {
        agents: wallets.len() as u64,
        blocks: head - start + 1,
        contract_logs,
        token_logs,
        runs,
        ponder,
    })
}
