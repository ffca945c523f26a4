//! Current state of an agent, recomputed from its facts.
//!
//! The `agents` row is a pure function of the fact tables, so the same code serves both a new
//! batch (refresh what it touched) and a reorg (refresh what the undone facts touched), and the
//! result is what a fresh index of the same chain would hold.

use super::keys::{contract_agent_key, erc8004_agent_key};
use super::{QueryContext, StoreResult};
use crate::sources::hex_address;
use alloy::primitives::{Address, U256};
use sqlx::{Row, SqliteConnection};
use std::collections::BTreeMap;

/// The agentWallet in a metadata value: 20 raw bytes or a 32-byte ABI-encoded address.
pub fn wallet_from_metadata(value: &[u8]) -> Option<Address> {
    match value.len() {
        20 => Some(Address::from_slice(value)),
        32 if value[..12].iter().all(|b| *b == 0) => Some(Address::from_slice(&value[12..])),
        _ => None,
    }
}

/// (block, log index) of a fact, for "latest wins".
type Position = (i64, i64);

/// Recomputes the ERC-8004 agent `token_id` of `registry`, or removes it when no registration
/// remains.
pub(super) async fn refresh_erc8004(
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &Address,
    token_id: &U256,
) -> StoreResult<()> {
    let key = erc8004_agent_key(chain_id, registry, token_id);
    let (chain, reg, token) = (chain_id as i64, hex_address(registry), token_id.to_string());
    // Everything but the owner's operators in one statement: the first registration and the
    // latest transfer, URI update, agentWallet and token approval.
    let latest = |table: &str, columns: &str, extra: &str| {
        format!(
            "SELECT {columns} FROM {table} WHERE chain_id = ?1 AND registry = ?2 AND token_id = ?3 {extra}
             ORDER BY block_number DESC, log_index DESC LIMIT 1"
        )
    };
    let sql = format!(
        "SELECT r.owner, r.uri, r.block_number AS r_block, r.log_index AS r_log, r.timestamp,
                t.to_address, t.block_number AS t_block, t.log_index AS t_log,
                u.uri AS u_uri, u.block_number AS u_block, u.log_index AS u_log,
                m.value AS wallet, m.block_number AS m_block,
                a.operator, a.approved, a.block_number AS a_block, a.log_index AS a_log
         FROM (SELECT owner, uri, block_number, log_index, timestamp FROM identity_registrations
               WHERE chain_id = ?1 AND registry = ?2 AND token_id = ?3
               ORDER BY block_number, log_index LIMIT 1) r
         LEFT JOIN ({transfer}) t ON 1
         LEFT JOIN ({update}) u ON 1
         LEFT JOIN ({wallet}) m ON 1
         LEFT JOIN ({approval}) a ON 1",
        transfer = latest(
            "identity_transfers",
            "to_address, block_number, log_index",
            ""
        ),
        update = latest("identity_uri_updates", "uri, block_number, log_index", ""),
        wallet = latest(
            "identity_metadata",
            "value, block_number",
            "AND key = 'agentWallet'"
        ),
        approval = latest(
            "identity_approvals",
            "operator, approved, block_number, log_index",
            ""
        ),
    );
    let row = sqlx::query(&sql)
        .bind(chain)
        .bind(&reg)
        .bind(&token)
        .fetch_optional(&mut *conn)
        .await
        .context("reading an ERC-8004 agent's facts")?;
    let Some(row) = row else {
        return delete(conn, &key).await;
    };
    let mut owner: String = row.get("owner");
    let mut uri: String = row.get("uri");
    let registered: Position = (row.get("r_block"), row.get("r_log"));
    let registered_at: i64 = row.get("timestamp");
    let mut updated_block = registered.0;

    let mut transferred: Position = (0, 0);
    if let Some(to) = row.get::<Option<String>, _>("to_address") {
        owner = to;
        transferred = (row.get("t_block"), row.get("t_log"));
        updated_block = updated_block.max(transferred.0);
    }
    if let Some(new_uri) = row.get::<Option<String>, _>("u_uri") {
        let at: Position = (row.get("u_block"), row.get("u_log"));
        if at > registered {
            uri = new_uri;
            updated_block = updated_block.max(at.0);
        }
    }
    let mut wallet = None;
    if let Some(value) = row.get::<Option<Vec<u8>>, _>("wallet") {
        wallet = wallet_from_metadata(&value).map(|w| hex_address(&w));
        updated_block = updated_block.max(row.get("m_block"));
    }

    // Operators: the token's approved address (cleared by any later transfer) and every
    // operator the current owner approved for all its tokens.
    let mut operators = std::collections::BTreeSet::new();
    if let Some(operator) = row.get::<Option<String>, _>("operator") {
        let at: Position = (row.get("a_block"), row.get("a_log"));
        if row.get::<bool, _>("approved") && at > transferred {
            operators.insert(operator);
        }
    }
    let for_all = sqlx::query(
        "SELECT operator, approved FROM identity_approvals
         WHERE chain_id = ? AND registry = ? AND owner = ? AND token_id IS NULL ORDER BY block_number, log_index",
    )
    .bind(chain)
    .bind(&reg)
    .bind(&owner)
    .fetch_all(&mut *conn)
    .await
    .context("reading operator approvals")?;
    let mut latest: BTreeMap<String, bool> = BTreeMap::new();
    for row in for_all {
        latest.insert(row.get("operator"), row.get("approved"));
    }
    operators.extend(latest.into_iter().filter(|(_, on)| *on).map(|(op, _)| op));

    sqlx::query(
        "INSERT OR REPLACE INTO agents (agent_key, chain_id, source, address, registry, token_id, owner, operators, uri,
            agent_wallet, payment_address, card, card_uri, card_hash, name, description, active, heartbeat_interval,
            last_heartbeat, registry_status, registered_block, registered_at, last_event_block)
         VALUES (?, ?, 'erc8004', NULL, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL, NULL, ?, ?, ?)",
    )
    .bind(&key)
    .bind(chain)
    .bind(&reg)
    .bind(&token)
    .bind(&owner)
    .bind(serde_json::to_string(&operators).expect("strings serialise"))
    .bind(&uri)
    .bind(&wallet)
    .bind(&wallet)
    .bind(registered.0)
    .bind(registered_at)
    .bind(updated_block)
    .execute(&mut *conn)
    .await
    .context("writing an ERC-8004 agent")?;
    Ok(())
}

/// Recomputes the agent contract at `address`, or removes it when nothing watches it any more.
pub(super) async fn refresh_contract(
    conn: &mut SqliteConnection,
    chain_id: u64,
    address: &Address,
) -> StoreResult<()> {
    let key = contract_agent_key(chain_id, address);
    let (chain, addr) = (chain_id as i64, hex_address(address));
    let first = sqlx::query(
        "SELECT w.discovered_by, w.via, w.block_number, e.block_timestamp
         FROM watched_agents w JOIN events e
           ON e.chain_id = w.chain_id AND e.block_number = w.block_number AND e.log_index = w.log_index
         WHERE w.chain_id = ? AND w.address = ? ORDER BY w.block_number, w.log_index LIMIT 1",
    )
    .bind(chain)
    .bind(&addr)
    .fetch_optional(&mut *conn)
    .await
    .context("reading how an agent contract was found")?;
    let Some(first) = first else {
        return delete(conn, &key).await;
    };
    let source: String = first.get("discovered_by");
    let via: String = first.get("via");
    let registered_block: i64 = first.get("block_number");
    let registered_at: i64 = first.get("block_timestamp");
    let mut updated_block = registered_block;

    let mut owner = String::new();
    let mut card: Option<String> = None;
    let mut active = true;
    let mut interval: Option<i64> = None;
    let mut heartbeat: Option<i64> = None;
    let facts = sqlx::query(
        "SELECT kind, value, block_number, timestamp FROM agent_contract_events
         WHERE chain_id = ? AND agent = ? ORDER BY block_number, log_index",
    )
    .bind(chain)
    .bind(&addr)
    .fetch_all(&mut *conn)
    .await
    .context("reading agent contract events")?;
    for row in facts {
        let value: String = row.get("value");
        updated_block = updated_block.max(row.get("block_number"));
        match row.get::<String, _>("kind").as_str() {
            "owner" => owner = value,
            "card" => card = Some(value),
            "active" => active = value == "1",
            "interval" => {
                interval = value.parse().ok();
                // Initialisation sets the first heartbeat to its own block time.
                heartbeat.get_or_insert(row.get("timestamp"));
            }
            "heartbeat" => heartbeat = value.parse().ok(),
            _ => {}
        }
    }

    let mut statuses: BTreeMap<String, &str> = BTreeMap::new();
    let mut uri: Option<String> = None;
    let enrolments = sqlx::query(
        "SELECT registry, kind, actor, metadata_uri, pending, block_number FROM registry_events
         WHERE chain_id = ? AND agent = ? ORDER BY block_number, log_index",
    )
    .bind(chain)
    .bind(&addr)
    .fetch_all(&mut *conn)
    .await
    .context("reading registry events")?;
    for row in enrolments {
        updated_block = updated_block.max(row.get("block_number"));
        let registry: String = row.get("registry");
        let status = match row.get::<String, _>("kind").as_str() {
            "AgentRegistered" => {
                if owner.is_empty() {
                    owner = row.get("actor");
                }
                if row.get::<Option<bool>, _>("pending").unwrap_or(false) {
                    "pending"
                } else {
                    "active"
                }
            }
            "AgentApproved" => "active",
            "AgentRemoved" => "removed",
            "AgentDeregistered" => "deregistered",
            _ => statuses.get(&registry).copied().unwrap_or("active"),
        };
        if let Some(u) = row.get::<Option<String>, _>("metadata_uri") {
            uri = Some(u);
        }
        statuses.insert(registry, status);
    }

    let parsed: Option<serde_json::Value> =
        card.as_deref().and_then(|c| serde_json::from_str(c).ok());
    let text = |field: &str| {
        parsed
            .as_ref()
            .and_then(|c| c.get(field))
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let card_hash =
        text("cardHash").filter(|h| h.trim_start_matches("0x").chars().any(|c| c != '0'));

    sqlx::query(
        "INSERT OR REPLACE INTO agents (agent_key, chain_id, source, address, registry, token_id, owner, operators, uri,
            agent_wallet, payment_address, card, card_uri, card_hash, name, description, active, heartbeat_interval,
            last_heartbeat, registry_status, registered_block, registered_at, last_event_block)
         VALUES (?, ?, ?, ?, ?, NULL, ?, '[]', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&key)
    .bind(chain)
    .bind(&source)
    .bind(&addr)
    .bind(&via)
    .bind(&owner)
    .bind(&uri)
    .bind(&addr)
    .bind(&card)
    .bind(text("cardUri"))
    .bind(card_hash)
    .bind(text("name"))
    .bind(text("description"))
    .bind(active)
    .bind(interval)
    .bind(heartbeat)
    .bind((!statuses.is_empty()).then(|| serde_json::to_string(&statuses).expect("serialises")))
    .bind(registered_block)
    .bind(registered_at)
    .bind(updated_block)
    .execute(&mut *conn)
    .await
    .context("writing an agent contract")?;
    Ok(())
}

/// Every ERC-8004 agent `owner` holds in `registry`, for operator changes.
pub(super) async fn tokens_of_owner(
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &Address,
    owner: &Address,
) -> StoreResult<Vec<U256>> {
    let ids: Vec<String> = sqlx::query_scalar(
        "SELECT token_id FROM agents WHERE chain_id = ? AND source = 'erc8004' AND registry = ? AND owner = ?",
    )
    .bind(chain_id as i64)
    .bind(hex_address(registry))
    .bind(hex_address(owner))
    .fetch_all(&mut *conn)
    .await
    .context("listing an owner's agents")?;
    Ok(ids.iter().filter_map(|id| id.parse().ok()).collect())
}

async fn delete(conn: &mut SqliteConnection, key: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM agents WHERE agent_key = ?")
        .bind(key)
        .execute(&mut *conn)
        .await
        .context("removing an agent")?;
    Ok(())
}
