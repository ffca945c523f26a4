use super::*;
use alloy::primitives::U256;

fn account(n: u64) -> Address {
    Address::left_padding_from(&n.to_be_bytes())
}

fn paid(payer: u64, block: u64) -> Move {
    Move {
        account: account(payer),
        block,
        log_index: 5,
        paid_block: block,
    }
}

fn inflow(funded: u64, block: u64) -> Inflow {
    Inflow {
        token: account(700),
        funder: account(900),
        funded: account(funded),
        amount: U256::from(1_000u64),
        block,
        log_index: 0,
    }
}

#[test]
fn a_new_account_needs_its_whole_window() {
    let cache = FundingCache::default();
    let missing = cache.missing(&[paid(1, 500), paid(2, 520)], 100);
    assert_eq!(
        missing,
        Missing {
            accounts: vec![account(1), account(2)],
            from: 400,
            to: 520,
        }
    );
}

#[test]
fn an_account_read_before_needs_only_the_blocks_since() {
    let mut cache = FundingCache::default();
    let first = cache.missing(&[paid(1, 500)], 100);
    cache.hold(&first, &[inflow(1, 450)]);
    let again = cache.missing(&[paid(1, 560)], 100);
    assert_eq!((again.from, again.to), (501, 560));
    cache.hold(&again, &[inflow(1, 555)]);
    assert!(cache.missing(&[paid(1, 540)], 100).accounts.is_empty());
    let held: Vec<u64> = cache
        .inflows_for(&[paid(1, 560)], 100)
        .iter()
        .map(|i| i.block)
        .collect();
    assert_eq!(
        held,
        vec![555],
        "only the inflows within the window of the move"
    );
    let held: Vec<u64> = cache
        .inflows_for(&[paid(1, 540)], 100)
        .iter()
        .map(|i| i.block)
        .collect();
    assert_eq!(held, vec![450]);
}

#[test]
fn a_gap_before_what_is_held_reads_the_window_again() {
    let mut cache = FundingCache::default();
    let first = cache.missing(&[paid(1, 5_000)], 100);
    cache.hold(&first, &[inflow(1, 4_950)]);
    // An earlier payment (a range resolved after a later one, or a second hop) needs blocks
    // before what is held.
    let earlier = cache.missing(&[paid(1, 1_000)], 100);
    assert_eq!((earlier.from, earlier.to), (900, 1_000));
    cache.hold(&earlier, &[inflow(1, 950)]);
    let held: Vec<u64> = cache
        .inflows_for(&[paid(1, 1_000)], 100)
        .iter()
        .map(|i| i.block)
        .collect();
    assert_eq!(held, vec![950]);
}

#[test]
fn forgetting_needs_everything_read_again() {
    let mut cache = FundingCache::default();
    let first = cache.missing(&[paid(1, 500)], 100);
    cache.hold(&first, &[inflow(1, 450)]);
    cache.forget();
    assert_eq!(cache.missing(&[paid(1, 500)], 100), first);
    assert!(cache.inflows_for(&[paid(1, 500)], 100).is_empty());
}

#[test]
fn what_no_window_to_come_reaches_is_let_go_as_the_chain_moves_on() {
    let mut cache = FundingCache::default();
    // Account 1 pays every 10 blocks and is funded every 10 blocks, for 1,000 blocks; account 2
    // was read once, long before.
    let old = cache.missing(&[paid(2, 150)], 100);
    cache.hold(&old, &[inflow(2, 120)]);
    for block in (200u64..1_200).step_by(10) {
        cache.forget_before(block.saturating_sub(300), 100);
        let missing = cache.missing(&[paid(1, block)], 100);
        cache.hold(&missing, &[inflow(1, block - 5)]);
    }
    // Let go every 100 blocks of the cut, last before block 800 (at the payment of block 1,100).
    let held = cache.inflows_for(&[paid(1, 1_200)], 1_200);
    assert!(held.iter().all(|i| i.block >= 800), "{held:?}");
    assert!(held.len() <= 40, "{} inflows held", held.len());
    assert!(
        cache.inflows_for(&[paid(2, 150)], 100).is_empty(),
        "account 2 let go"
    );
    // What is still reachable is held, and a window reaching before what is held reads again.
    let recent = cache.inflows_for(&[paid(1, 1_195)], 100);
    assert_eq!(recent.len(), 10);
    let earlier = cache.missing(&[paid(1, 700)], 100);
    assert_eq!(
        (earlier.accounts.len(), earlier.from, earlier.to),
        (1, 600, 700)
    );
}
