//! `agentindex copy --from URL --to URL`: moves an index between databases (SQLite to
//! PostgreSQL, or back) without indexing again, then checks the copy: the canonical dumps of
//! both are equal, and so are the reputation feeds of every chain at its indexed block.

use agentindex_indexer::config::Config;
use agentindex_indexer::feed;
use agentindex_indexer::reputation::ReputationRules;
use agentindex_indexer::store::{Store, StoreRead, copy};
use sha2::{Digest, Sha256};
use std::process::ExitCode;

/// Copies `from` into `to` (which must be empty) and verifies the copy; the feeds are computed
/// under each chain's rules from `config` when one is given, else under the default rules.
pub(crate) async fn run(from: &str, to: &str, config: Option<Config>) -> anyhow::Result<ExitCode> {
    let source = Store::open(from).await?;
    let target = Store::open(to).await?;
    let started = std::time::Instant::now();
    let rows = copy::copy(&source, &target, |table, rows| {
        eprintln!("  {table}: {rows} rows");
    })
    .await?;
    println!(
        "copied {rows} rows in {:.1} s; verifying",
        started.elapsed().as_secs_f64()
    );
    let verdict = verify(&source, &target, config.as_ref()).await;
    source.close().await;
    target.close().await;
    match verdict? {
        Verified::Same(feeds) => {
            println!("verified: the dumps are equal, and so are the feeds ({feeds})");
            Ok(ExitCode::SUCCESS)
        }
        Verified::Differs(what) => {
            eprintln!("the copy differs from the source: {what}");
            Ok(ExitCode::FAILURE)
        }
    }
}

enum Verified {
    /// Equal; the feeds' digests by chain.
    Same(String),
    Differs(String),
}

async fn verify(
    source: &Store,
    target: &Store,
    config: Option<&Config>,
) -> anyhow::Result<Verified> {
    if source.canonical_dump().await? != target.canonical_dump().await? {
        return Ok(Verified::Differs("the canonical dumps".into()));
    }
    let mut digests = Vec::new();
    for status in source.statuses().await? {
        let Some(block) = status.indexed_block else {
            continue;
        };
        let rules = config
            .and_then(|c| {
                c.chains
                    .iter()
                    .find(|chain| chain.chain_id == status.chain_id)
                    .map(|chain| ReputationRules::of_chain(chain, &c.reputation))
                    .or_else(|| {
                        c.cardano
                            .iter()
                            .find(|network| network.chain_id() == status.chain_id)
                            .map(|network| {
                                ReputationRules::of_cardano(network.network, &c.reputation)
                            })
                    })
            })
            .unwrap_or_default();
        let digest = |body: Vec<u8>| -> String {
            Sha256::digest(&body)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        let snapshot = feed::Snapshot::AsOf {
            block,
            rules: &rules,
        };
        let from = digest(feed::body(source, status.chain_id, snapshot).await?);
        let to = digest(feed::body(target, status.chain_id, snapshot).await?);
        if from != to {
            return Ok(Verified::Differs(format!(
                "the feed of chain {} at block {block}: {from} against {to}",
                status.chain_id
            )));
        }
        digests.push(format!(
            "chain {} at block {block}: sha-256 {from}",
            status.chain_id
        ));
    }
    Ok(Verified::Same(if digests.is_empty() {
        "no chain indexed yet".into()
    } else {
        digests.join("; ")
    }))
}
