//! Reading the facts an agent's reputation depends on, for many agents at once: payments, the
//! owner, operator and wallet history, outflows, feedback, validations and ratings, each up to a
//! block. A few queries per few hundred agents, never a round of queries per agent.

mod contracts;
mod erc8004;

use crate::reputation::{AgentFacts, Outflow, Payment};
use crate::store::sql::{fetch_packed, fetch_packed_in_chain_order, packed, packed_rows, push_in};
use crate::store::{QueryContext, StoreResult};
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

/// A fact's position on the chain, from its stored block and log index.
fn at(block: i64, log: i64) -> (u64, u64) {
    (block as u64, log as u64)
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
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {} FROM agents WHERE agent_key",
        packed("agent_key, source, address, registry, token_id, last_event_block")
    ));
    push_in(&mut query, keys);
    let rows: Vec<SubjectRow> = fetch_packed(conn, query, "reading the agents to score").await?;
    let mut subjects: Vec<Subject> = rows.into_iter().map(Subject::from).collect();
    subjects.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(subjects)
}

/// An `agents` row as [`subjects`] reads it: key, source, address, registry, token id and
/// newest block.
type SubjectRow = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
);

impl From<SubjectRow> for Subject {
    fn from((key, source, contract, registry, token, last_event_block): SubjectRow) -> Self {
        let erc8004 = (source == "erc8004")
            .then(|| Some((registry?, token?)))
            .flatten();
        Self {
            key,
            erc8004,
            contract,
            last_event_block: last_event_block.max(0) as u64,
        }
    }
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
    let rows: Vec<SubjectRow> = sqlx::query_as(
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
    Ok(rows.into_iter().map(Subject::from).collect())
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
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {} FROM payments WHERE block_number <= ",
        packed_rows("agent_key, payer, payee, token, amount, timestamp, eip3009")
    ));
    query.push_bind(clamp(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, subjects.iter().map(|s| s.key.as_str()));
    type PaymentRow = (String, String, String, String, String, i64, i64);
    let rows: Vec<(i64, i64, PaymentRow)> =
        fetch_packed_in_chain_order(conn, query, "reading agents' payments").await?;
    for (block, log, (key, payer, payee, token, amount, timestamp, eip3009)) in rows {
        let Some(entry) = loaded.get_mut(&key) else {
            continue;
        };
        entry.saw(block);
        let fields = PaymentFields {
            payer: &payer,
            payee: &payee,
            token: &token,
            amount: &amount,
            block,
            log_index: log,
            timestamp,
            eip3009: eip3009 != 0,
        };
        if let Some(payment) = fields.parse() {
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
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {} FROM outflows WHERE block_number <= ",
        packed("agent_key, to_address, block_number, timestamp")
    ));
    query.push_bind(clamp(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, subjects.iter().map(|s| s.key.as_str()));
    let rows: Vec<(String, String, i64, i64)> =
        fetch_packed(conn, query, "reading agents' outflows").await?;
    for (key, to, block, timestamp) in rows {
        let Some(entry) = loaded.get_mut(&key) else {
            continue;
        };
        entry.saw(block);
        if let Ok(to) = to.parse() {
            entry.facts.outflows.push(Outflow {
                to,
                timestamp: timestamp as u64,
            });
        }
    }
    Ok(())
}

/// A payments row as reputation reads it (`None` if a stored value does not parse).
pub(in crate::store) fn payment(row: &SqliteRow) -> Option<Payment> {
    PaymentFields {
        payer: row.get("payer"),
        payee: row.get("payee"),
        token: row.get("token"),
        amount: row.get("amount"),
        block: row.get("block_number"),
        log_index: row.get("log_index"),
        timestamp: row.get("timestamp"),
        eip3009: row.get("eip3009"),
    }
    .parse()
}

/// The stored columns of a payment.
struct PaymentFields<'a> {
    payer: &'a str,
    payee: &'a str,
    token: &'a str,
    amount: &'a str,
    block: i64,
    log_index: i64,
    timestamp: i64,
    eip3009: bool,
}

impl PaymentFields<'_> {
    /// The payment they describe (`None` if a stored value does not parse).
    fn parse(&self) -> Option<Payment> {
        Some(Payment {
            payer: self.payer.parse().ok()?,
            payee: self.payee.parse().ok()?,
            token: self.token.parse().ok()?,
            amount: self.amount.parse().ok()?,
            block: self.block as u64,
            log_index: self.log_index as u64,
            timestamp: self.timestamp as u64,
            eip3009: self.eip3009,
        })
    }
}
