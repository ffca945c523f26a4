//! What the aggregations should say, computed from the chain's own logs (read over the devnet's
//! RPC, decoded with the contracts' ABIs), apart from anything the index wrote: each point with
//! its block's timestamp, and the cumulative totals of every bucket a chain or agent had a
//! point in.

use agentindex_contracts::{Devnet, IdentityRegistry, ReputationRegistry, ValidationRegistry};
use alloy::primitives::Address;
use alloy::providers::Provider;
use alloy::rpc::types::{Filter, Log};
use alloy::sol_types::SolEvent;
use std::collections::BTreeMap;

/// One point: when, whose (`chain:token`), and the values the aggregations sum.
#[derive(Debug, Clone)]
pub(super) struct Point {
    pub(super) timestamp: u64,
    pub(super) agent: String,
    pub(super) id: u64,
    pub(super) values: Vec<f64>,
}

/// The chain's points, and the newest log's timestamp (where the open bucket begins).
pub(super) struct Points {
    /// Registrations: no values.
    pub(super) registrations: Vec<Point>,
    /// Feedback: created, revoked, value counted in `valueSum`, value delta.
    pub(super) feedback: Vec<Point>,
    /// Validation: requests, responses, score.
    pub(super) validations: Vec<Point>,
    pub(super) newest: u64,
}

async fn logs<E: SolEvent>(devnet: &Devnet, address: Address) -> Vec<(E, Log)> {
    let filter = Filter::new()
        .address(address)
        .event_signature(E::SIGNATURE_HASH)
        .from_block(0)
        .to_block(devnet.block_number().await.unwrap());
    devnet
        .provider()
        .get_logs(&filter)
        .await
        .unwrap()
        .into_iter()
        .map(|log| (E::decode_log(&log.inner).unwrap().data, log))
        .collect()
}

async fn timestamp(devnet: &Devnet, log: &Log) -> u64 {
    let number = log.block_number.unwrap();
    devnet
        .provider()
        .get_block_by_number(number.into())
        .await
        .unwrap()
        .unwrap()
        .header
        .timestamp
}

async fn point(devnet: &Devnet, log: &Log, token: &str, values: Vec<f64>) -> Point {
    Point {
        timestamp: timestamp(devnet, log).await,
        agent: format!("{}:{token}", devnet.chain_id()),
        id: log.block_number.unwrap() * 1_000_000 + log.log_index.unwrap(),
        values,
    }
}

/// Every point on `devnet`'s ERC-8004 registries.
pub(super) async fn points(devnet: &Devnet) -> Points {
    let d = devnet.deployment();
    let mut registrations = Vec::new();
    for (event, log) in logs::<IdentityRegistry::Registered>(devnet, d.identity).await {
        registrations.push(point(devnet, &log, &event.agentId.to_string(), Vec::new()).await);
    }
    let given = logs::<ReputationRegistry::NewFeedback>(devnet, d.reputation).await;
    let value = |event: &ReputationRegistry::NewFeedback| {
        let digits: i128 = event.value;
        digits as f64 / 10f64.powi(i32::from(event.valueDecimals))
    };
    let mut feedback = Vec::new();
    for (event, log) in &given {
        let v = value(event);
        feedback.push(
            point(
                devnet,
                log,
                &event.agentId.to_string(),
                vec![1.0, 0.0, v, v],
            )
            .await,
        );
    }
    for (event, log) in logs::<ReputationRegistry::FeedbackRevoked>(devnet, d.reputation).await {
        let (revoked, _) = given
            .iter()
            .find(|(g, _)| {
                g.agentId == event.agentId
                    && g.clientAddress == event.clientAddress
                    && g.feedbackIndex == event.feedbackIndex
            })
            .expect("a revocation of feedback given");
        let v = value(revoked);
        feedback.push(
            point(
                devnet,
                &log,
                &event.agentId.to_string(),
                vec![0.0, 1.0, 0.0, -v],
            )
            .await,
        );
    }
    let mut validations = Vec::new();
    for (event, log) in logs::<ValidationRegistry::ValidationRequest>(devnet, d.validation).await {
        validations.push(
            point(
                devnet,
                &log,
                &event.agentId.to_string(),
                vec![1.0, 0.0, 0.0],
            )
            .await,
        );
    }
    for (event, log) in logs::<ValidationRegistry::ValidationResponse>(devnet, d.validation).await {
        let score = f64::from(event.response);
        validations.push(
            point(
                devnet,
                &log,
                &event.agentId.to_string(),
                vec![0.0, 1.0, score],
            )
            .await,
        );
    }
    let newest = registrations
        .iter()
        .chain(&feedback)
        .chain(&validations)
        .map(|p| p.timestamp)
        .max()
        .unwrap();
    Points {
        registrations,
        feedback,
        validations,
        newest,
    }
}

/// A row of an aggregation: its agent (empty per chain), its bucket's start (seconds) and its
/// cumulative values.
pub(super) type Row = (String, u64, Vec<f64>);

/// The rows an aggregation over `points` holds at `interval` seconds, per agent when
/// `per_agent`, the bucket still open (ending after `newest`) only when `current`; newest
/// first, as aggregations answer by default.
pub(super) fn rollup(
    points: &[Point],
    interval: u64,
    per_agent: bool,
    current: bool,
    newest: u64,
) -> Vec<Row> {
    let width = points.first().map_or(0, |p| p.values.len());
    let mut per_bucket: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for point in points {
        let key = if per_agent {
            point.agent.clone()
        } else {
            String::new()
        };
        let sums = per_bucket
            .entry((key, point.timestamp / interval))
            .or_insert_with(|| vec![0.0; width]);
        for (sum, value) in sums.iter_mut().zip(&point.values) {
            *sum += value;
        }
    }
    let mut running: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut rows = Vec::new();
    for ((key, bucket), sums) in per_bucket {
        let total = running
            .entry(key.clone())
            .or_insert_with(|| vec![0.0; width]);
        for (t, s) in total.iter_mut().zip(&sums) {
            *t += s;
        }
        if current || (bucket + 1) * interval <= newest {
            rows.push((key, bucket * interval, total.clone()));
        }
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows
}
