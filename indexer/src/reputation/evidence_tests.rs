//! Unit tests of the feedback weighing in `evidence.rs`: each rule and the attack it answers.

use super::*;
use alloy::primitives::U256;

fn feedback(client: u8, value: i128, block: u64) -> FeedbackEntry {
    FeedbackEntry {
        client: Address::with_last_byte(client),
        value,
        decimals: 0,
        tag1: String::new(),
        tag2: String::new(),
        revoked: false,
        position: (block, 0),
        timestamp: block * 12,
        proof: None,
    }
}

fn paid(client: u8, block: u64) -> Payment {
    Payment {
        payer: Address::with_last_byte(client),
        payee: Address::with_last_byte(0xee),
        token: Address::with_last_byte(0xdc),
        amount: U256::from(1_000_000u64),
        block,
        log_index: 1,
        tx_hash: B256::from(U256::from(u64::from(client) << 32 | block)),
        timestamp: block * 12,
        x402: true,
    }
}

/// `feedback` whose file cites `payment` (from and to as the payment has them).
fn citing(client: u8, value: i128, block: u64, payment: &Payment) -> FeedbackEntry {
    FeedbackEntry {
        proof: Some(crate::reputation::CitedPayment {
            tx_hash: payment.tx_hash,
            from: Some(payment.payer),
            to: Some(payment.payee),
        }),
        ..feedback(client, value, block)
    }
}

#[test]
fn fifty_unpaid_top_ratings_weigh_less_than_five_paid_good_ones() {
    // Spread over months so that no burst is involved: the cap alone decides.
    let spam: Vec<FeedbackEntry> = (0..50)
        .map(|i| feedback(i + 1, 100, 1 + u64::from(i) * 100_000))
        .collect();
    let honest: Vec<FeedbackEntry> = (0..5).map(|i| feedback(100 + i, 80, 50)).collect();
    let payments: Vec<Payment> = (0..5).map(|i| paid(100 + i, 10)).collect();
    let params = FeedbackParams::default();
    let spammed = feedback_score(&spam, &[], &params);
    let earned = feedback_score(&honest, &payments, &params);
    assert!(
        earned.score.unwrap() > spammed.score.unwrap(),
        "{earned:?} against {spammed:?}"
    );
    assert!((spammed.evidence_weight - params.unpaid_cap).abs() < 1e-9);
    assert_eq!(earned.clients, BTreeMap::from([(Evidence::Paid, 5)]));
    assert!(spam.len() > TOP && spammed.top.len() == TOP);
}

#[test]
fn a_payment_after_the_feedback_is_no_evidence_for_it() {
    let got = feedback_score(&[feedback(1, 90, 20)], &[paid(1, 30)], &Default::default());
    assert_eq!(got.feedback[0].evidence, Evidence::Unpaid);
    let got = feedback_score(&[feedback(1, 90, 40)], &[paid(1, 30)], &Default::default());
    assert_eq!(got.feedback[0].evidence, Evidence::Paid);
}

#[test]
fn unpaid_clients_arriving_together_are_a_burst() {
    let params = FeedbackParams {
        burst_clients: 3,
        ..FeedbackParams::default()
    };
    // Three within a day of each other, one a month later.
    let entries = [
        feedback(1, 100, 100),
        feedback(2, 100, 200),
        feedback(3, 100, 300),
        feedback(4, 100, 300 + 250_000),
    ];
    let got = feedback_score(&entries, &[], &params);
    let evidence: Vec<Evidence> = got.feedback.iter().map(|w| w.evidence).collect();
    use Evidence::{Burst, Unpaid};
    assert_eq!(evidence, [Burst, Burst, Burst, Unpaid]);
    assert!(got.feedback[0].weight < got.feedback[3].weight);
}

#[test]
fn one_client_saying_it_many_times_says_it_once() {
    let once = feedback_score(&[feedback(1, 100, 40)], &[paid(1, 1)], &Default::default());
    let many: Vec<FeedbackEntry> = (0..30).map(|i| feedback(1, 100, 40 + i)).collect();
    let repeated = feedback_score(&many, &[paid(1, 1)], &Default::default());
    assert!((once.score.unwrap() - repeated.score.unwrap()).abs() < 1e-9);
    assert!((repeated.evidence_weight - 1.0).abs() < 1e-9);
}

#[test]
fn a_feedback_file_citing_a_counted_payment_from_another_wallet_weighs_as_paid() {
    // Client 1 paid from wallet 9; its feedback file says so.
    let payment = paid(9, 10);
    let proven = feedback_score(
        &[citing(1, 80, 20, &payment)],
        std::slice::from_ref(&payment),
        &Default::default(),
    );
    assert_eq!(proven.feedback[0].evidence, Evidence::Proven);
    assert_eq!(proven.feedback[0].proof, Some(payment.tx_hash));
    let unproven = feedback_score(
        &[feedback(1, 80, 20)],
        std::slice::from_ref(&payment),
        &Default::default(),
    );
    assert_eq!(unproven.feedback[0].evidence, Evidence::Unpaid);
    assert!(proven.score.unwrap() > unproven.score.unwrap());
    assert_eq!(proven.clients, BTreeMap::from([(Evidence::Proven, 1)]));
}

#[test]
fn a_proof_must_match_a_counted_payment_made_before_the_feedback() {
    let payment = paid(9, 10);
    let later = paid(9, 30);
    let mut other_payer = citing(1, 80, 20, &payment);
    other_payer.proof.as_mut().unwrap().from = Some(Address::with_last_byte(8));
    let mut other_payee = citing(1, 80, 20, &payment);
    other_payee.proof.as_mut().unwrap().to = Some(Address::with_last_byte(7));
    for (case, entry, payments) in [
        ("a payment not counted", citing(1, 80, 20, &payment), vec![]),
        (
            "a payment after the feedback",
            citing(1, 80, 20, &later),
            vec![later.clone()],
        ),
        ("another payer", other_payer, vec![payment.clone()]),
        ("another payee", other_payee, vec![payment.clone()]),
    ] {
        let got = feedback_score(&[entry], &payments, &Default::default());
        assert_eq!(got.feedback[0].evidence, Evidence::Unpaid, "{case}");
    }
}

#[test]
fn one_payment_proves_one_client_only() {
    // Thirty wallets copy the hash of one real payment; the first to cite it has it.
    let payment = paid(9, 10);
    let copies: Vec<FeedbackEntry> = (0..30)
        .map(|i| citing(1 + i, 100, 20 + u64::from(i) * 100_000, &payment))
        .collect();
    let got = feedback_score(&copies, &[payment], &Default::default());
    let proven: Vec<Address> = got
        .feedback
        .iter()
        .filter(|w| w.evidence == Evidence::Proven)
        .map(|w| w.client)
        .collect();
    assert_eq!(proven, [Address::with_last_byte(1)]);
    // The same client citing it again keeps it.
    let payment = paid(9, 10);
    let twice = [citing(1, 90, 20, &payment), citing(1, 70, 40, &payment)];
    let got = feedback_score(&twice, &[payment], &Default::default());
    assert!(got.feedback.iter().all(|w| w.evidence == Evidence::Proven));
}

#[test]
fn revoked_feedback_is_not_weighed_and_none_is_no_score() {
    let mut entry = feedback(1, 100, 40);
    entry.revoked = true;
    let got = feedback_score(&[entry], &[], &Default::default());
    assert_eq!((got.score, got.feedback.len()), (None, 0));
}
