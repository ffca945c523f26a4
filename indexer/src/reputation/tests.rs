//! The six properties the payment score promises (`docs/reputation.md`), each a test that fails
//! when the property breaks, plus features computed by hand.

use super::*;
use alloy::primitives::{Address, B256, U256};
use std::collections::BTreeMap;

const DAY: u64 = 86_400;
const NOW: u64 = 1_800_000_000;

fn usdc() -> Address {
    Address::with_last_byte(0xdc)
}

fn agent() -> Address {
    Address::with_last_byte(0xa9)
}

fn payer(i: u8) -> Address {
    Address::with_last_byte(i)
}

fn tokens() -> BTreeMap<Address, TokenRule> {
    BTreeMap::from([(
        usdc(),
        TokenRule {
            decimals: 6,
            dust: U256::from(1_000u64),
        },
    )])
}

fn pay(from: Address, amount: u64, at: u64) -> Payment {
    Payment {
        payer: from,
        payee: agent(),
        token: usdc(),
        amount: U256::from(amount),
        block: at / 2,
        log_index: 0,
        tx_hash: B256::ZERO,
        timestamp: at,
        x402: false,
    }
}

fn score(payments: &[Payment], outflows: &[Outflow], as_of: u64) -> f64 {
    payment_score(payments, outflows, as_of, &ScoreParams::default(), None).score
}

/// The payments that count, as the store will pass them.
fn counted(payments: &[Payment], side: &AgentSide) -> Vec<Payment> {
    payments
        .iter()
        .filter(|p| exclusion(p, side, &tokens(), &Intermediaries::default()).is_none())
        .cloned()
        .collect()
}

#[test]
fn property_1_many_payers_beat_one_payer_paying_as_often() {
    for n in 2..=50u8 {
        let spread: Vec<Payment> = (1..=n).map(|i| pay(payer(i), 10_000, NOW)).collect();
        let single: Vec<Payment> = (1..=n).map(|_| pay(payer(1), 10_000, NOW)).collect();
        assert!(
            score(&spread, &[], NOW) > score(&single, &[], NOW),
            "{n} payers vs one payer {n} times"
        );
    }
}

#[test]
fn property_2_each_payers_contribution_has_diminishing_returns() {
    let mut previous_gain = f64::INFINITY;
    let mut payments = Vec::new();
    let mut last = 0.0;
    for _ in 0..30 {
        payments.push(pay(payer(1), 10_000, NOW));
        let now = payment_score(&payments, &[], NOW, &ScoreParams::default(), None).sum;
        let gain = now - last;
        assert!(gain > 0.0, "another payment still adds something");
        assert!(gain < previous_gain, "but less than the one before");
        previous_gain = gain;
        last = now;
    }
}

#[test]
fn property_3_scores_decay_with_block_time_not_the_clock() {
    let payments: Vec<Payment> = (1..=5).map(|i| pay(payer(i), 10_000, NOW)).collect();
    let fresh = score(&payments, &[], NOW);
    let month = score(&payments, &[], NOW + 30 * DAY);
    let year = score(&payments, &[], NOW + 365 * DAY);
    assert!(
        fresh > month && month > year && year > 0.0,
        "{fresh} {month} {year}"
    );
    let half_life = ScoreParams::default().half_life_secs as u64;
    let decayed = payment_score(
        &payments,
        &[],
        NOW + half_life,
        &ScoreParams::default(),
        None,
    );
    assert!(
        decayed
            .payers
            .iter()
            .all(|p| (p.decayed - 0.5).abs() < 1e-9),
        "one half-life later each payment weighs half"
    );
}

#[test]
fn property_4_self_payments_and_dust_change_nothing() {
    let side = AgentSide {
        owner: Some(payer(90)),
        operators: vec![payer(91)],
        wallet: Some(payer(92)),
    };
    let honest: Vec<Payment> = (1..=4).map(|i| pay(payer(i), 10_000, NOW - DAY)).collect();
    let mut padded = honest.clone();
    padded.push(pay(agent(), 10_000, NOW));
    padded.push(pay(payer(90), 10_000, NOW));
    padded.push(pay(payer(91), 10_000, NOW));
    padded.push(pay(payer(92), 10_000, NOW));
    padded.push(pay(payer(50), 999, NOW));
    padded.push(Payment {
        token: Address::with_last_byte(0xee),
        ..pay(payer(51), 10_000, NOW)
    });
    let reasons: Vec<Option<Exclusion>> = padded[4..]
        .iter()
        .map(|p| exclusion(p, &side, &tokens(), &Intermediaries::default()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            Some(Exclusion::SelfPayment),
            Some(Exclusion::Owner),
            Some(Exclusion::Operator),
            Some(Exclusion::Wallet),
            Some(Exclusion::Dust),
            Some(Exclusion::UnknownToken)
        ]
    );
    assert_eq!(
        score(&counted(&padded, &side), &[], NOW),
        score(&counted(&honest, &side), &[], NOW)
    );
}

#[test]
fn property_5_a_payer_funded_by_the_agent_counts_less() {
    let payments: Vec<Payment> = (1..=3).map(|i| pay(payer(i), 10_000, NOW)).collect();
    let clean = score(&payments, &[], NOW);
    let funded = [Outflow {
        to: payer(2),
        timestamp: NOW - 2 * DAY,
    }];
    let circular = score(&payments, &funded, NOW);
    assert!(circular < clean, "{circular} < {clean}");
    let long_ago = [Outflow {
        to: payer(2),
        timestamp: NOW - 400 * DAY,
    }];
    assert_eq!(
        score(&payments, &long_ago, NOW),
        clean,
        "outside the window it does not matter"
    );
}

#[test]
fn property_6_the_score_is_a_pure_function_of_data_up_to_the_block() {
    let earlier: Vec<Payment> = (1..=6)
        .map(|i| pay(payer(i), 10_000, NOW - u64::from(i) * DAY))
        .collect();
    let mut with_later = earlier.clone();
    with_later.push(pay(payer(40), 10_000, NOW + DAY));
    let later_outflow = [Outflow {
        to: payer(1),
        timestamp: NOW + 1,
    }];
    let a = payment_score(&earlier, &[], NOW, &ScoreParams::default(), None);
    let b = payment_score(
        &with_later,
        &later_outflow,
        NOW,
        &ScoreParams::default(),
        None,
    );
    assert_eq!(a, b, "what happened after the block does not count");
    let mut shuffled = earlier.clone();
    shuffled.reverse();
    assert_eq!(
        payment_score(&shuffled, &[], NOW, &ScoreParams::default(), None),
        a,
        "nor does the order the rows arrive in"
    );
}

#[test]
fn features_match_a_hand_count() {
    // Payer 1 pays on two days, payer 2 once (an x402 settlement), payer 3 twice on one day.
    let mut payments = vec![
        pay(payer(1), 1_000_000, NOW - 3 * DAY),
        pay(payer(1), 2_500_000, NOW - DAY),
        Payment {
            x402: true,
            ..pay(payer(2), 500_000, NOW - 2 * DAY)
        },
        pay(payer(3), 250_000, NOW - 10),
        pay(payer(3), 250_000, NOW - 5),
    ];
    payments.push(pay(payer(4), 9_000_000, NOW + DAY)); // after the as-of time
    let half_life = DAY as f64;
    let f = features(&payments, &tokens(), NOW, half_life);
    assert_eq!(f.payment_count, 5);
    assert_eq!(f.x402_count, 1);
    assert_eq!(f.unique_payers, 3);
    assert_eq!(f.repeat_payers, 1);
    assert!(
        (f.volume[&usdc()] - 4.5).abs() < 1e-9,
        "{}",
        f.volume[&usdc()]
    );
    assert_eq!(
        (f.first_payment, f.last_payment),
        (Some(NOW - 3 * DAY), Some(NOW - 5))
    );
    let expected = 0.125 + 0.5 + 0.25 + decay_of(10) + decay_of(5);
    assert!((f.recency_weighted - expected).abs() < 1e-9);
    assert!(
        (f.top_payer_share - 0.4).abs() < 1e-9,
        "payers 1 and 3 each paid 2 of 5"
    );
}

fn decay_of(age: u64) -> f64 {
    0.5f64.powf(age as f64 / DAY as f64)
}

#[test]
fn the_config_in_days_becomes_parameters_in_seconds() {
    let config = crate::config::ReputationConfig {
        half_life_days: 2.0,
        circular_window_days: 0.5,
        ..Default::default()
    };
    let params = ScoreParams::from(&config);
    assert_eq!(params.half_life_secs, 172_800.0);
    assert_eq!(params.circular_window_secs, 43_200);
    assert_eq!(params.scale, config.scale);
    assert_eq!(params.circular_discount, config.circular_discount);
    assert_eq!(ScoreParams::default().half_life_secs, 30.0 * 86_400.0);
    assert_eq!(Weights::default().payments, 0.3);
}
