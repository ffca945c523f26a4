//! Unit tests of the decoder plumbing on hand-built logs; the decoders themselves are tested
//! against logs from the real contracts in `indexer/tests/decoders.rs`.

use super::*;
use agentindex_contracts::TestUSDC as T;
use alloy::primitives::{LogData, U256, address, b256};

fn log_at(address: Address, block: u64, index: u64, tx: B256, data: LogData) -> Log {
    Log {
        inner: alloy::primitives::Log { address, data },
        block_hash: Some(B256::repeat_byte(1)),
        block_number: Some(block),
        block_timestamp: Some(1_700_000_000),
        transaction_hash: Some(tx),
        transaction_index: Some(0),
        log_index: Some(index),
        removed: false,
    }
}

const TOKEN: Address = address!("0x1111111111111111111111111111111111111111");
const PAYER: Address = address!("0x2222222222222222222222222222222222222222");
const PAYEE: Address = address!("0x3333333333333333333333333333333333333333");
const TX: B256 = b256!("0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
const NONCE: B256 = b256!("0x00000000000000000000000000000000000000000000000000000000000000ee");

fn transfer(index: u64, from: Address) -> Log {
    let event = T::Transfer {
        from,
        to: PAYEE,
        value: U256::from(5),
    };
    log_at(TOKEN, 10, index, TX, event.encode_log_data())
}

fn authorization(index: u64, token: Address, tx: B256) -> Log {
    let event = T::AuthorizationUsed {
        authorizer: PAYER,
        nonce: NONCE,
    };
    log_at(token, 10, index, tx, event.encode_log_data())
}

#[test]
fn authorization_directly_before_transfer_is_a_settlement() {
    let logs = [authorization(3, TOKEN, TX), transfer(4, PAYER)];
    assert_eq!(
        payments::settlements(&logs, &[]).get(&(10, 4)).copied(),
        Some(payments::Settlement::Eip3009(NONCE))
    );
}

#[test]
fn near_misses_are_plain_transfers() {
    // A log in between.
    assert!(
        payments::settlements(&[authorization(2, TOKEN, TX), transfer(4, PAYER)], &[]).is_empty()
    );
    // Another token's authorisation.
    let other = address!("0x4444444444444444444444444444444444444444");
    assert!(
        payments::settlements(&[authorization(3, other, TX), transfer(4, PAYER)], &[]).is_empty()
    );
    // Another transaction.
    assert!(
        payments::settlements(
            &[authorization(3, TOKEN, B256::ZERO), transfer(4, PAYER)],
            &[]
        )
        .is_empty()
    );
    // Someone else's money moved.
    assert!(
        payments::settlements(&[authorization(3, TOKEN, TX), transfer(4, PAYEE)], &[]).is_empty()
    );
}

const PROXY: Address = address!("0x5555555555555555555555555555555555555555");

fn proxy_settled(index: u64, proxy: Address, tx: B256) -> Log {
    use agentindex_contracts::X402Permit2Proxy as P;
    log_at(proxy, 10, index, tx, P::Settled {}.encode_log_data())
}

#[test]
fn a_proxy_settlement_marks_the_nearest_transfer_before_it_in_its_transaction() {
    use payments::Settlement;
    let proxies = [(PROXY, false)];
    let logs = [
        transfer(4, PAYER),
        transfer(6, PAYER),
        proxy_settled(7, PROXY, TX),
    ];
    let got = payments::settlements(&logs, &proxies);
    assert_eq!(got.get(&(10, 6)), Some(&Settlement::Permit2Exact));
    assert_eq!(got.get(&(10, 4)), None, "one settlement, one transfer");
    let upto = payments::settlements(&logs, &[(PROXY, true)]);
    assert_eq!(upto.get(&(10, 6)), Some(&Settlement::Permit2Upto));
    // Not a configured proxy, another transaction, or no transfer before it: nothing.
    let other = address!("0x6666666666666666666666666666666666666666");
    assert!(
        payments::settlements(&[transfer(4, PAYER), proxy_settled(5, other, TX)], &proxies)
            .is_empty()
    );
    assert!(
        payments::settlements(
            &[transfer(4, PAYER), proxy_settled(5, PROXY, B256::ZERO)],
            &proxies
        )
        .is_empty()
    );
    assert!(
        payments::settlements(&[proxy_settled(3, PROXY, TX), transfer(4, PAYER)], &proxies)
            .is_empty()
    );
}

#[test]
fn erc20_and_erc721_transfer_share_topic0_but_decode_by_role() {
    let erc20 = transfer(1, PAYER);
    assert!(matches!(
        decode(Role::Token, &erc20),
        Ok(Decoded::TokenTransfer { .. })
    ));
    // Three topics are not an ERC-721 Transfer (which indexes the token id too).
    assert!(matches!(
        decode(Role::Identity, &erc20),
        Err(DecodeError::Malformed { .. })
    ));
}

#[test]
fn unknown_topics_and_anonymous_logs_are_errors_not_panics() {
    let unknown = log_at(
        TOKEN,
        1,
        0,
        TX,
        LogData::new_unchecked(vec![B256::repeat_byte(9)], Default::default()),
    );
    let err = decode(Role::Reputation, &unknown).unwrap_err();
    assert!(err.to_string().starts_with("unknown event 0x0909"), "{err}");
    let anonymous = log_at(
        TOKEN,
        1,
        0,
        TX,
        LogData::new_unchecked(vec![], Default::default()),
    );
    assert_eq!(decode(Role::Agent, &anonymous), Err(DecodeError::NoTopic));
}

#[test]
fn truncated_data_is_malformed() {
    let mut log = transfer(1, PAYER);
    log.inner.data = LogData::new_unchecked(log.inner.data.topics().to_vec(), vec![1, 2, 3].into());
    let err = decode(Role::Token, &log).unwrap_err();
    assert!(matches!(err, DecodeError::Malformed { event, .. } if event.starts_with("Transfer(")));
}

#[test]
fn bytes32_tags_are_trimmed_text() {
    let mut raw = [0u8; 32];
    raw[..5].copy_from_slice(b"speed");
    assert_eq!(bytes32_text(&B256::from(raw)), "speed");
    assert_eq!(bytes32_text(&B256::ZERO), "");
}
