//! Evaluations in canonical JSON (`crate::canonical_json`, the form stored rows and the feed
//! are written in) are byte for byte what `serde_jcs` writes, for evaluations with every part
//! filled (payments of several tokens and payers, exclusions, feedback under tags needing
//! escapes and UTF-16 ordering, proofs, validations, ratings, trust) and for one holding
//! non-finite numbers, which both write as null, as the store's fallback through
//! `serde_json::Value` does.

use super::trust::TrustContribution;
use super::*;
use crate::canonical_json;
use alloy::primitives::{Address, B256, U256};
use std::collections::BTreeMap;

const DAY: u64 = 86_400;
const START: u64 = 1_790_000_000;

fn rules() -> ReputationRules {
    ReputationRules {
        tokens: BTreeMap::from([
            (
                Address::with_last_byte(0xdc),
                TokenRule {
                    decimals: 6,
                    dust: U256::from(1_000u64),
                },
            ),
            (
                Address::with_last_byte(0xdd),
                TokenRule {
                    decimals: 18,
                    dust: U256::ZERO,
                },
            ),
        ]),
        ..ReputationRules::default()
    }
}

/// Tags whose names need escapes or order differently in UTF-16 than in UTF-8.
const TAGS: &[&str] = &[
    "quality",
    "",
    "speed",
    "\u{e9}t\u{e9}",
    "\u{1f600}",
    "\u{e000}x",
    "tab\there",
    "quote\"d",
    "Z",
];

/// The facts of agent number `seed`: each seed fills the parts differently.
fn facts(seed: u64) -> AgentFacts {
    let agent = Address::with_last_byte(0xa9);
    let owner = Address::with_last_byte(0x90);
    let payer = |i: u64| Address::with_last_byte(1 + ((seed + i) % 9) as u8);
    let payments: Vec<Payment> = (0..1 + seed % 14)
        .map(|i| Payment {
            payer: if i % 7 == 6 { owner } else { payer(i) },
            payee: agent,
            token: Address::with_last_byte([0xdc, 0xdd, 0xee][(i % 3) as usize]),
            amount: U256::from(if i % 5 == 4 { 10 } else { 1_000_000 * (i + 1) }),
            block: 10 + i * 50,
            log_index: i,
            tx_hash: B256::from(U256::from(seed << 32 | i)),
            timestamp: START + i * DAY / 3,
            x402: i % 2 == 0,
        })
        .collect();
    let mut side = SideHistory::default();
    side.push((1, 0), SideChange::Owner(owner));
    let feedback: Vec<FeedbackEntry> = (0..seed % 8)
        .map(|i| FeedbackEntry {
            client: payer(i),
            value: (seed * 37 + i * 11) as i128 % 100 - 10,
            decimals: (i % 3) as u8,
            tag1: TAGS[((seed + i) % TAGS.len() as u64) as usize].into(),
            tag2: TAGS[((seed * 3 + i) % TAGS.len() as u64) as usize].into(),
            revoked: i == 5,
            position: (20 + i * 40, 1),
            timestamp: START + i * DAY / 2,
            proof: (i % 2 == 1).then(|| CitedPayment {
                tx_hash: payments[0].tx_hash,
                from: Some(payments[0].payer),
                to: Some(agent),
            }),
        })
        .collect();
    let requests: Vec<String> = (0..seed % 4).map(|i| format!("0x{i:064x}")).collect();
    let responses = requests
        .iter()
        .enumerate()
        .map(|(i, hash)| ValidationResponse {
            request_hash: hash.clone(),
            response: (seed as u8).wrapping_mul(31 + i as u8) % 101,
            position: (30 + i as u64, 0),
        })
        .collect();
    let ratings = (0..seed % 5)
        .map(|i| Rating {
            rater: payer(i),
            score: ((seed + i) % 6) as u8,
            position: (40 + i, 0),
        })
        .collect();
    let trust = (!seed.is_multiple_of(3)).then(|| TrustInputs {
        epoch_block: 1_000 + seed,
        agent: (seed % 3 == 1).then(|| AgentTrust {
            relative: seed as f64 / 7.0,
            top_payers: (0..seed % 4)
                .map(|i| TrustContribution {
                    payer: payer(i),
                    trust: 1.0 / (i as f64 + 3.0),
                })
                .collect(),
        }),
        standing: (0..3).map(|i| (payer(i), 0.25 * i as f64)).collect(),
        unproven_cap: 0.5,
        // Some agents' first two payers share a funding cluster.
        clusters: (0..2)
            .filter(|_| seed % 4 == 2)
            .map(|i| {
                let membership = ClusterMembership {
                    representative: payer(0),
                    cluster: PayerCluster {
                        funder: payer(90),
                        size: 2,
                        block: 30 + seed,
                    },
                };
                (payer(i), membership)
            })
            .collect(),
    });
    AgentFacts {
        payments,
        side,
        outflows: vec![Outflow {
            to: payer(1),
            timestamp: START - DAY,
        }],
        feedback,
        feedback_responses: seed % 3,
        validation_requests: requests,
        validation_responses: responses,
        ratings,
        trust,
        availability: None,
    }
}

/// Evaluations of many agents at several times.
fn evaluations() -> Vec<Evaluation> {
    let rules = rules();
    let mut all = vec![evaluate(&AgentFacts::default(), START, &rules)];
    for seed in 0..120 {
        let facts = facts(seed);
        for as_of in [START, START + DAY, START + 40 * DAY] {
            all.push(evaluate(&facts, as_of, &rules));
        }
    }
    all
}

#[test]
fn evaluations_are_encoded_as_serde_jcs_encodes_them() {
    let all = evaluations();
    let tagged = all.iter().filter(|e| e.feedback.by_tag.len() > 2).count();
    let trusted = all.iter().filter(|e| e.trust.is_some()).count();
    assert!(
        tagged > 10 && trusted > 10,
        "{tagged} tagged, {trusted} trusted"
    );
    for evaluation in &all {
        let ours = canonical_json::to_string(evaluation).unwrap();
        assert_eq!(ours, serde_jcs::to_string(evaluation).unwrap());
        // And it reads back as the same evaluation.
        let back: Evaluation = serde_json::from_str(&ours).unwrap();
        assert_eq!(canonical_json::to_string(&back).unwrap(), ours);
    }
}

#[test]
fn a_non_finite_number_in_an_evaluation_is_written_as_null() {
    let mut evaluation = evaluate(&facts(4), START + DAY, &rules());
    evaluation.composite.score = Some(f64::NAN);
    evaluation.payment_score.sum = f64::INFINITY;
    evaluation
        .payments
        .volume
        .insert(Address::with_last_byte(0xdc), f64::NEG_INFINITY);
    let ours = canonical_json::to_string(&evaluation).unwrap();
    assert_eq!(ours, serde_jcs::to_string(&evaluation).unwrap());
    // What the store falls back to when the evaluation itself cannot be encoded.
    let value = serde_json::to_value(&evaluation).unwrap();
    assert_eq!(ours, canonical_json::to_string(&value).unwrap());
    assert!(ours.contains("\"score\":null") && ours.contains("\"sum\":null"));
}
