//! An ERC-8004 agent's side read from a real SQLite store.

use crate::schema::{agents, identity_approvals, identity_registrations, identity_transfers};
use crate::store::Store;
use crate::store::reputation::load::{facts, subjects};
use alloy::primitives::Address;

/// Owners the token passes through: more than two statements' worth of padded owner lists,
/// and more than SQLite's bound values could name in one.
const OWNERS: u64 = 20_000;

/// A token passed through 20,000 owners is read whole: its last owner is the owner, and the
/// operator that owner approved for all its agents (read with the last chunk of owners) acts
/// for it.
#[tokio::test]
async fn a_token_passed_through_twenty_thousand_owners_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!(
        "sqlite://{}",
        dir.path().join("owners.db").display()
    ))
    .await
    .unwrap();
    let mut conn = store.write.acquire().await.unwrap();
    let registry = "0x8004a169fb4a3325136eb29fa0ceb6d2e539a432";
    let key = &format!("1:{registry}:7");
    let owner = |n: u64| format!("{:#042x}", n + 1);
    let statements = [
        format!(
            "INSERT INTO {} (agent_key, chain_id, source, registry, token_id, owner, operators,
                active, registered_block, registered_at, last_event_block)
             VALUES ('{key}', 1, 'erc8004', '{registry}', '7', '{}', '[]', 1, 1, 1, {})",
            agents::NAME,
            owner(OWNERS - 1),
            OWNERS + 1
        ),
        format!(
            "INSERT INTO {} (chain_id, registry, token_id, owner, uri, block_number, log_index,
                tx_hash, timestamp)
             VALUES (1, '{registry}', '7', '{}', '', 1, 0, '0x', 1)",
            identity_registrations::NAME,
            owner(0)
        ),
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {})
             INSERT INTO {} (chain_id, registry, token_id, from_address, to_address,
                block_number, log_index)
             SELECT 1, '{registry}', '7', printf('0x%040x', i), printf('0x%040x', i + 1),
                    i + 1, 0
               FROM n",
            OWNERS - 1,
            identity_transfers::NAME
        ),
        format!(
            "INSERT INTO {} (chain_id, registry, owner, operator, token_id, approved,
                block_number, log_index)
             VALUES (1, '{registry}', '{}', '{:#042x}', NULL, 1, 5, 1)",
            identity_approvals::NAME,
            owner(OWNERS - 1),
            0xabc_u64
        ),
    ];
    for statement in &statements {
        sqlx::query(statement).execute(&mut *conn).await.unwrap();
    }
    let subjects = subjects(&mut conn, &[key.to_string()]).await.unwrap();
    let loaded = facts(&mut conn, 1, &subjects, u64::MAX).await.unwrap();
    let side = loaded[key].facts.side.sides_at(&[(OWNERS + 2, 0)]);
    let last: Address = owner(OWNERS - 1).parse().unwrap();
    let operator: Address = format!("{:#042x}", 0xabc_u64).parse().unwrap();
    assert_eq!(side[0].owner, Some(last));
    assert_eq!(side[0].operators, [operator]);
}
