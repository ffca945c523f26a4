//! An agent's payments as the payment score and features see them once the trust rank has
//! found funding clusters: every payer of one cluster is one payer, named by the cluster's
//! representative (its smallest payer address). Sixteen puppets filled by one account count as
//! one customer, with one `ln(1 + n)` part, one distinct payer, and the best standing any of
//! them holds; funds the agent sent to any of them make the whole cluster circular.

use super::funding::{ClusterMembership, PayerCluster};
use super::payments::Payment;
use super::score::{Outflow, PaymentScore};
use alloy::primitives::Address;
use std::collections::BTreeMap;

/// Payments, outflows and standing with every clustered payer replaced by its cluster's
/// representative.
pub struct OnePerCluster {
    /// The payments, payers replaced.
    pub payments: Vec<Payment>,
    /// The outflows, recipients replaced.
    pub outflows: Vec<Outflow>,
    /// Standing by payer; a cluster's is the best of its members'.
    pub standing: BTreeMap<Address, f64>,
}

/// `payments`, `outflows` and `standing` seen one payer per cluster of `clusters` (the
/// memberships of the agent's clustered payers).
pub fn one_per_cluster(
    payments: &[Payment],
    outflows: &[Outflow],
    standing: &BTreeMap<Address, f64>,
    clusters: &BTreeMap<Address, ClusterMembership>,
) -> OnePerCluster {
    let as_one = |address: &Address| clusters.get(address).map_or(*address, |m| m.representative);
    let mut merged: BTreeMap<Address, f64> = BTreeMap::new();
    for (payer, s) in standing {
        let entry = merged.entry(as_one(payer)).or_insert(*s);
        *entry = entry.max(*s);
    }
    OnePerCluster {
        payments: payments
            .iter()
            .map(|p| Payment {
                payer: as_one(&p.payer),
                ..p.clone()
            })
            .collect(),
        outflows: outflows
            .iter()
            .map(|o| Outflow {
                to: as_one(&o.to),
                ..*o
            })
            .collect(),
        standing: merged,
    }
}

/// Names, on each part of `score` that stands for a cluster, the cluster it stands for.
pub fn explain_clusters(score: &mut PaymentScore, clusters: &BTreeMap<Address, ClusterMembership>) {
    let by_representative: BTreeMap<Address, &PayerCluster> = clusters
        .values()
        .map(|m| (m.representative, &m.cluster))
        .collect();
    for part in &mut score.payers {
        part.cluster = by_representative.get(&part.payer).map(|c| (*c).clone());
    }
}

#[cfg(test)]
#[path = "one_per_cluster_tests.rs"]
mod tests;
