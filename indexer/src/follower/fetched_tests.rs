//! Unit tests of a fetched range's trimming and bookkeeping.

use super::*;
use alloy::primitives::B256;

fn log_at(block: u64, index: u64) -> Log {
    Log {
        block_number: Some(block),
        log_index: Some(index),
        ..Log::default()
    }
}

fn range(blocks: &[(u64, u64)]) -> FetchedRange {
    let mut fetched = FetchedRange::default();
    for (block, count) in blocks {
        for index in 0..*count {
            fetched.logs.push(log_at(*block, index));
        }
    }
    fetched
}

#[test]
fn keeps_whole_blocks_that_fit_and_drops_the_rest() {
    let mut fetched = range(&[(10, 3), (11, 4), (12, 5)]);
    fetched.payments.push(log_at(11, 9));
    fetched.payments.push(log_at(12, 9));
    fetched
        .settlements
        .insert((12, 9), Settlement::Eip3009(B256::ZERO));
    fetched.new_agents.insert(Address::with_last_byte(1), 10);
    fetched.new_agents.insert(Address::with_last_byte(2), 12);
    fetched
        .new_payment_addresses
        .insert(Address::with_last_byte(3), 12);

    assert_eq!(
        fetched.keep_at_most(9),
        Some(11),
        "3 + 5 fit, 3 + 5 + 6 do not"
    );
    assert_eq!(fetched.len(), 8);
    assert!(fetched.logs.iter().all(|l| l.block_number <= Some(11)));
    assert!(fetched.settlements.is_empty());
    assert_eq!(fetched.new_agents.len(), 1);
    assert!(fetched.new_payment_addresses.is_empty());
}

#[test]
fn a_block_denser_than_the_limit_is_kept_whole() {
    let mut fetched = range(&[(7, 20), (8, 1)]);
    assert_eq!(fetched.keep_at_most(5), Some(7));
    assert_eq!(fetched.len(), 20);
}
