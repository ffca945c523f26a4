//! Reading the facts an agent's reputation depends on, for many agents at once: payments, the
//! owner, operator and wallet history, outflows, feedback, validations and ratings, each up to a
//! block. A few queries per few hundred agents, never a round of queries per agent.

mod contracts;
mod erc8004;

use crate::reputation::{AgentFacts, Outflow, Payment};
use crate::store::sql::push_in;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use contracts::contract_facts;
use erc8004::{Scope, erc8004_side, feedback, validations};
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::BTreeMap;

/// An agent whose reputation is computed, as its `agents` row identifies it.
#[derive(Debug, Clone)]
pub(super) struct Subject {
    pub(super) key: String,
    /// `Some((identity registry, token id))` for an ERC-8004 agent.
    erc8004: Option<(String, String)>,
    /// The contract, for an agent contract.
    contract: Option<String>,
    /// The newest block of any of its own facts in the `agents` row.
    pub(super) last_event_block: u64,
}

/// An agent's facts and the newest block among them.
#[derive(Debug, Default)]
pub(super) struct Loaded {
    pub(super) facts: AgentFacts,
    pub(super) last_block: u64,
}

impl Loaded {
    fn saw(&mut self, block: i64) {
        self.last_block = self.last_block.max(block.max(0) as u64);
    }
}

/// The facts being loaded for `key` (one of the subjects), having seen one of them in `block`.
fn seen<'a>(loaded: &'a mut BTreeMap<String, Loaded>, key: &str, block: i64) -> &'a mut Loaded {
    let entry = loaded.get_mut(key).expect("subjects were loaded");
    entry.saw(block);
    entry
}

/// The agents among `keys` that exist, in key order.
pub(super) async fn subjects(
    conn: &mut SqliteConnection,
    keys: &[String],
) -> StoreResult<Vec<Subject>> {
    let mut query = QueryBuilder::<Sqlite>::new(
        "SELECT agent_key, source, address, registry, token_id, last_event_block FROM agents WHERE agent_key",
    );
    push_in(&mut query, keys);
    query.push("ORDER BY agent_key");
    let rows = query
        .build()
        .fetch_all(&mut *conn)
        .await
        .context("reading the agents to score")?;
    Ok(rows.iter().map(subject).collect())
}

/// The agents of `chain_id` registered at or before `block`, in key order, `limit` from after
/// `after`.
pub(super) async fn subjects_at(
    conn: &mut SqliteConnection,
    chain_id: u64,
    block: u64,
    after: &str,
    limit: usize,
) -> StoreResult<Vec<Subject>> {
    let rows = sqlx::query(
        "SELECT agent_key, source, address, registry, token_id, last_event_block FROM agents
         WHERE chain_id = ? AND registered_block <= ? AND agent_key > ? ORDER BY agent_key LIMIT ?",
    )
    .bind(chain_id as i64)
    .bind(clamp(block))
    .bind(after)
    .bind(limit as i64)
    .fetch_all(&mut *conn)
    .await
    .context("listing the agents of a feed")?;
    Ok(rows.iter().map(subject).collect())
}

fn subject(row: &SqliteRow) -> Subject {
    let source: String = row.get("source");
    let erc8004 = (source == "erc8004")
        .then(|| Some((row.get("registry"), row.get("token_id"))))
        .flatten()
        .and_then(|(registry, token): (Option<String>, Option<String>)| Some((registry?, token?)));
    Subject {
        key: row.get("agent_key"),
        erc8004,
        contract: row.get("address"),
        last_event_block: row.get::<i64, _>("last_event_block").max(0) as u64,
    }
}

fn clamp(block: u64) -> i64 {
    block.min(i64::MAX as u64) as i64
}

/// The facts of `subjects` on `chain_id` up to and including block `up_to`.
pub(super) async fn facts(
    conn: &mut SqliteConnection,
    chain_id: u64,
    subjects: &[Subject],
    up_to: u64,
) -> StoreResult<BTreeMap<String, Loaded>> {
    let mut loaded: BTreeMap<String, Loaded> = subjects
        .iter()
        .map(|s| (s.key.clone(), Loaded::default()))
        .collect();
    payments(conn, subjects, up_to, &mut loaded).await?;
    outflows(conn, subjects, up_to, &mut loaded).await?;
    let mut by_registry: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for subject in subjects {
        if let Some((registry, token)) = &subject.erc8004 {
            by_registry
                .entry(registry.as_str())
                .or_default()
                .insert(token.as_str(), subject.key.as_str());
        }
    }
    for (registry, tokens) in &by_registry {
        let scope = Scope {
            chain_id,
            registry,
            up_to,
        };
        erc8004_side(conn, &scope, tokens, &mut loaded).await?;
        feedback(conn, &scope, tokens, &mut loaded).await?;
        validations(conn, &scope, tokens, &mut loaded).await?;
    }
    let contracts: BTreeMap<&str, &str> = subjects
        .iter()
        .filter(|s| s.erc8004.is_none())
        .filter_map(|s| Some((s.contract.as_deref()?, s.key.as_str())))
        .collect();
    if !contracts.is_empty() {
        contract_facts(conn, chain_id, up_to, &contracts, &mut loaded).await?;
    }
    Ok(loaded)
}

async fn payments(
    conn: &mut SqliteConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut query = QueryBuilder::<Sqlite>::new(
        "SELECT agent_key, payer, payee, token, amount, block_number, log_index, timestamp, eip3009
         FROM payments WHERE block_number <= ",
    );
    query.push_bind(clamp(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, subjects.iter().map(|s| s.key.as_str()));
    query.push("ORDER BY block_number, log_index");
    let rows = query
        .build()
        .fetch_all(&mut *conn)
        .await
        .context("reading agents' payments")?;
    for row in rows {
        let Some(entry) = loaded.get_mut(row.get::<&str, _>("agent_key")) else {
            continue;
        };
        entry.saw(row.get("block_number"));
        if let Some(payment) = payment(&row) {
            entry.facts.payments.push(payment);
        }
    }
    Ok(())
}

/// Transfers out of the agents' bound addresses.
async fn outflows(
    conn: &mut SqliteConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut query = QueryBuilder::<Sqlite>::new(
        "SELECT agent_key, to_address, block_number, timestamp FROM outflows WHERE block_number <= ",
    );
    query.push_bind(clamp(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, subjects.iter().map(|s| s.key.as_str()));
    let rows = query
        .build()
        .fetch_all(&mut *conn)
        .await
        .context("reading agents' outflows")?;
    for row in rows {
        let Some(entry) = loaded.get_mut(row.get::<&str, _>("agent_key")) else {
            continue;
        };
        entry.saw(row.get("block_number"));
        if let Some(to) = address(&row, "to_address") {
            entry.facts.outflows.push(Outflow {
                to,
                timestamp: row.get::<i64, _>("timestamp") as u64,
            });
        }
    }
    Ok(())
}

/// A payments row as reputation reads it (`None` if a stored value does not parse).
pub(in crate::store) fn payment(row: &SqliteRow) -> Option<Payment> {
    Some(Payment {
        payer: row.get::<&str, _>("payer").parse().ok()?,
        payee: row.get::<&str, _>("payee").parse().ok()?,
        token: row.get::<&str, _>("token").parse().ok()?,
        amount: row.get::<&str, _>("amount").parse().ok()?,
        block: row.get::<i64, _>("block_number") as u64,
        log_index: row.get::<i64, _>("log_index") as u64,
        timestamp: row.get::<i64, _>("timestamp") as u64,
        eip3009: row.get("eip3009"),
    })
}

fn position(row: &SqliteRow) -> (u64, u64) {
    (
        row.get::<i64, _>("block_number") as u64,
        row.get::<i64, _>("log_index") as u64,
    )
}

fn address(row: &SqliteRow, column: &str) -> Option<Address> {
    row.get::<&str, _>(column).parse().ok()
}
