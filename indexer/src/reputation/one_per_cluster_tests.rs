use super::*;
use crate::reputation::score::{ScoreParams, payment_score};
use alloy::primitives::{B256, U256};

fn account(n: u64) -> Address {
    Address::left_padding_from(&n.to_be_bytes())
}

fn paid_by(payer: u64, block: u64) -> Payment {
    Payment {
        payer: account(payer),
        payee: account(500),
        token: account(600),
        amount: U256::from(1_000_000u64),
        block,
        log_index: 0,
        tx_hash: B256::ZERO,
        timestamp: 1_000 + block,
        x402: true,
    }
}

fn ring(members: &[u64], funder: u64) -> BTreeMap<Address, ClusterMembership> {
    let cluster = PayerCluster {
        funder: account(funder),
        size: members.len() as u64,
        block: 7,
    };
    members
        .iter()
        .map(|m| {
            (
                account(*m),
                ClusterMembership {
                    representative: account(members[0]),
                    cluster: cluster.clone(),
                },
            )
        })
        .collect()
}

#[test]
fn a_cluster_of_payers_scores_as_one_payer_and_says_why() {
    let payments: Vec<Payment> = (1..=4).map(|p| paid_by(p, 10 + p)).collect();
    let clusters = ring(&[1, 2, 3], 99);
    let view = one_per_cluster(&payments, &[], &BTreeMap::new(), &clusters);
    let params = ScoreParams::default();
    let mut score = payment_score(&view.payments, &view.outflows, 2_000, &params, None);
    explain_clusters(&mut score, &clusters);
    assert_eq!(
        score.payers.len(),
        2,
        "three puppets are one payer, plus one other"
    );
    let puppets = &score.payers[0];
    assert_eq!(puppets.payer, account(1));
    assert_eq!(puppets.payments, 3);
    assert_eq!(puppets.cluster.as_ref().map(|c| c.size), Some(3));
    assert_eq!(
        puppets.cluster.as_ref().map(|c| c.funder),
        Some(account(99))
    );
    assert_eq!(score.payers[1].cluster, None);
    let apart = payment_score(&payments, &[], 2_000, &params, None);
    assert!(
        score.sum < apart.sum,
        "one ln(1 + n) for the cluster is less than one per puppet"
    );
}

#[test]
fn a_cluster_holds_its_best_members_standing_and_an_outflow_to_any_member() {
    let payments = vec![paid_by(1, 10), paid_by(2, 11)];
    let standing = BTreeMap::from([(account(2), 0.6), (account(1), 0.2)]);
    let outflows = [Outflow {
        to: account(2),
        timestamp: 1_005,
    }];
    let view = one_per_cluster(&payments, &outflows, &standing, &ring(&[1, 2], 99));
    assert_eq!(view.standing, BTreeMap::from([(account(1), 0.6)]));
    assert_eq!(view.outflows[0].to, account(1));
    assert!(view.payments.iter().all(|p| p.payer == account(1)));
}
