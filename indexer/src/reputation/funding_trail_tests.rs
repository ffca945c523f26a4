use super::*;

const LOOKBACK_BLOCKS: u64 = 2_000;

fn trail_of(payments: &[Move], inflows: &[Inflow]) -> BTreeMap<(u64, u64), (usize, u64)> {
    trail(payments, inflows, LOOKBACK_BLOCKS)
}

fn account(n: u64) -> Address {
    Address::left_padding_from(&n.to_be_bytes())
}

fn inflow(funder: u64, funded: u64, amount: u64, block: u64, log_index: u64) -> Inflow {
    Inflow {
        token: account(9_999),
        funder: account(funder),
        funded: account(funded),
        amount: U256::from(amount),
        block,
        log_index,
    }
}

fn payment(payer: u64, block: u64, log_index: u64) -> Move {
    Move {
        account: account(payer),
        block,
        log_index,
        paid_block: block,
    }
}

fn kept(trail: &BTreeMap<(u64, u64), (usize, u64)>) -> Vec<((u64, u64), u64)> {
    trail.iter().map(|(p, (_, paid))| (*p, *paid)).collect()
}

#[test]
fn a_payers_inflows_before_it_paid_are_kept_and_later_ones_are_not() {
    let inflows = vec![
        inflow(1, 10, 500, 90, 0),
        inflow(2, 10, 500, 100, 3),
        // After the payment (same block, later log), and a block later.
        inflow(3, 10, 500, 100, 7),
        inflow(4, 10, 500, 101, 0),
    ];
    let trail = trail_of(&[payment(10, 100, 5)], &inflows);
    assert_eq!(kept(&trail), vec![((90, 0), 100), ((100, 3), 100)]);
}

#[test]
fn inflows_older_than_the_lookback_are_not_kept() {
    let paid = 10_000;
    let inflows = vec![
        inflow(1, 10, 500, paid - LOOKBACK_BLOCKS - 1, 0),
        inflow(2, 10, 500, paid - LOOKBACK_BLOCKS, 0),
    ];
    let trail = trail_of(&[payment(10, paid, 0)], &inflows);
    assert_eq!(kept(&trail), vec![((paid - LOOKBACK_BLOCKS, 0), paid)]);
}

#[test]
fn the_trail_follows_funders_back_three_hops_and_no_further() {
    // 4 funds 3 funds 2 funds 1 funds the payer 10, each a few blocks before the next.
    let inflows = vec![
        inflow(4, 3, 500, 10, 0),
        inflow(3, 2, 500, 20, 0),
        inflow(2, 1, 500, 30, 0),
        inflow(1, 10, 500, 40, 0),
    ];
    let trail = trail_of(&[payment(10, 50, 0)], &inflows);
    assert_eq!(
        kept(&trail),
        vec![((20, 0), 50), ((30, 0), 50), ((40, 0), 50)],
        "three transfers back from the payment, not the fourth"
    );
}

#[test]
fn a_transfer_reached_by_two_payments_keeps_the_earlier_one() {
    let inflows = vec![inflow(1, 10, 500, 40, 0)];
    let trail = trail_of(&[payment(10, 900, 0), payment(10, 60, 2)], &inflows);
    assert_eq!(kept(&trail), vec![((40, 0), 60)]);
}

#[test]
fn only_the_largest_inflows_of_a_move_are_kept() {
    // Many small inflows and one large: the large one and the next largest are kept.
    let mut inflows: Vec<Inflow> = (0..40).map(|i| inflow(100 + i, 10, 1 + i, 50, i)).collect();
    inflows.push(inflow(7, 10, 1_000_000, 60, 0));
    let trail = trail_of(&[payment(10, 70, 0)], &inflows);
    assert_eq!(trail.len(), INFLOWS_PER_MOVE);
    assert!(trail.contains_key(&(60, 0)), "the largest inflow is kept");
    assert!(
        !trail.contains_key(&(50, 0)),
        "the smallest inflows are not"
    );
}

#[test]
fn a_busy_account_keeps_none_of_its_inflows() {
    let inflows: Vec<Inflow> = (0..=BUSY_INFLOWS as u64)
        .map(|i| inflow(100 + i, 10, 500, 50 + i / 8, i % 8))
        .collect();
    assert!(trail_of(&[payment(10, 1_000, 0)], &inflows).is_empty());
}

#[test]
fn mints_and_transfers_to_oneself_are_not_funding() {
    let inflows = vec![inflow(0, 10, 500, 40, 0), inflow(10, 10, 500, 41, 0)];
    assert!(trail_of(&[payment(10, 50, 0)], &inflows).is_empty());
}

#[test]
fn what_is_kept_does_not_depend_on_the_order_of_inflows_or_payments() {
    let inflows = vec![
        inflow(1, 10, 500, 40, 0),
        inflow(2, 11, 700, 41, 1),
        inflow(3, 1, 900, 30, 0),
        inflow(3, 2, 900, 30, 1),
    ];
    let payments = [payment(10, 50, 0), payment(11, 52, 0)];
    let forward = trail_of(&payments, &inflows);
    let mut reversed_inflows = inflows.clone();
    reversed_inflows.reverse();
    let mut reversed_payments = payments;
    reversed_payments.reverse();
    let backward = trail_of(&reversed_payments, &reversed_inflows);
    assert_eq!(kept(&forward), kept(&backward));
    assert_eq!(forward.len(), 4);
}
