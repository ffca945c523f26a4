//! Reading the facts an agent's reputation depends on, for many agents at once: payments, the
//! owner, operator and wallet history, outflows, feedback, validations and ratings, each up to a
//! block. A few queries per few hundred agents, never a round of queries per agent.

mod contracts;
mod erc8004;
mod feedback_files;
mod masumi;
mod outflows;

use crate::primitives::sql_bound;
use crate::reputation::AgentFacts;
use crate::schema::{agent_liveness, agents, payments};
use crate::store::Dialect;
use crate::store::decode::{self, int};
use crate::store::in_list::push_in;
use crate::store::packed_row::{PackedRow, packed_row};
use crate::store::payments::PaymentFields;
use crate::store::sql::{fetch_packed, fetch_packed_in_chain_order, packed, packed_rows};
use crate::store::{QueryContext, StoreResult};
use contracts::contract_facts;
use erc8004::{Scope, erc8004_side, feedback, validations};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::BTreeMap;

/// An agent whose reputation is computed, as its `agents` row identifies it.
#[derive(Debug, Clone)]
pub(super) struct Subject {
    pub(super) key: String,
    /// `Some((identity registry, token id))` for an ERC-8004 agent.
    erc8004: Option<(String, String)>,
    /// The contract, for an agent contract.
    contract: Option<String>,
    /// Whether it is a Masumi agent (on Cardano).
    masumi: bool,
    /// The newest block of any of its own facts in the `agents` row.
    pub(super) last_event_block: u64,
}

/// An agent's facts and the newest block among them.
#[derive(Debug, Default)]
pub(in crate::store::reputation) struct Loaded {
    pub(in crate::store::reputation) facts: AgentFacts,
    pub(in crate::store::reputation) last_block: u64,
}

impl Loaded {
    fn saw(&mut self, block: i64) -> StoreResult<()> {
        let block = decode::uint(FACT, "block_number", block)?;
        self.last_block = self.last_block.max(block);
        Ok(())
    }
}

/// What errors call a fact table, whichever one a fact came from.
const FACT: &str = "fact";

/// A fact's position on the chain, from its stored block and log index.
fn at(block: i64, log: i64) -> StoreResult<(u64, u64)> {
    Ok((
        decode::uint(FACT, "block_number", block)?,
        decode::uint(FACT, "log_index", log)?,
    ))
}

/// The facts being loaded for `key` (one of the subjects), having seen one of them in `block`.
fn seen<'a>(
    loaded: &'a mut BTreeMap<String, Loaded>,
    key: &str,
    block: i64,
) -> StoreResult<&'a mut Loaded> {
    let entry = loaded.get_mut(key).expect("subjects were loaded");
    entry.saw(block)?;
    Ok(entry)
}

/// The agents among `keys` that exist, in key order.
pub(super) async fn subjects(
    conn: &mut AnyConnection,
    keys: &[String],
) -> StoreResult<Vec<Subject>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {} FROM {agents_table} WHERE agent_key",
        packed::<SubjectRow>(Dialect::of(conn)),
        agents_table = agents::NAME
    ));
    push_in(&mut query, keys);
    let rows: Vec<SubjectRow> = fetch_packed(conn, query, "reading the agents to score").await?;
    let mut subjects = rows
        .into_iter()
        .map(Subject::try_from)
        .collect::<StoreResult<Vec<Subject>>>()?;
    subjects.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(subjects)
}

packed_row! {
    /// An `agents` row as [`subjects`] reads it (packed, or by name).
    #[derive(sqlx::FromRow)]
    struct SubjectRow {
        agent_key: String = agents::agent_key,
        source: String = agents::source,
        address: Option<String> = agents::address,
        registry: Option<String> = agents::registry,
        token_id: Option<String> = agents::token_id,
        last_event_block: i64 = agents::last_event_block,
    }
}

impl TryFrom<SubjectRow> for Subject {
    type Error = crate::store::StoreError;

    fn try_from(row: SubjectRow) -> StoreResult<Self> {
        let SubjectRow {
            agent_key: key,
            source,
            address: contract,
            registry,
            token_id: token,
            last_event_block,
        } = row;
        let erc8004 = (source == "erc8004")
            .then(|| Some((registry?, token?)))
            .flatten();
        Ok(Self {
            key,
            erc8004,
            contract,
            masumi: source == "masumi",
            last_event_block: decode::uint("agents", "last_event_block", last_event_block)?,
        })
    }
}

/// The agents of `chain_id` registered at or before `block`, in key order, `limit` from after
/// `after`.
pub(super) async fn subjects_at(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: u64,
    after: &str,
    limit: usize,
) -> StoreResult<Vec<Subject>> {
    // `+chain_id` keeps the planner off the indexes that lead with the chain: through them
    // every page sorted all of the chain's agents (a temporary B-tree), 70 ms a page at 100,000
    // agents; along the key's own index a page is a short range scan.
    let rows: Vec<SubjectRow> = sqlx::query_as(&format!(
        "SELECT {} FROM {agents_table}
         WHERE +chain_id = $1 AND registered_block <= $2 AND agent_key > $3
         ORDER BY agent_key LIMIT $4",
        SubjectRow::named_select_list(Dialect::of(conn)),
        agents_table = agents::NAME
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(sql_bound(block))
    .bind(after)
    .bind(int("limit", limit as u64)?)
    .fetch_all(&mut *conn)
    .await
    .context("listing the agents of a feed")?;
    rows.into_iter().map(Subject::try_from).collect()
}

/// The facts of `subjects` on `chain_id` up to and including block `up_to`.
pub(super) async fn facts(
    conn: &mut AnyConnection,
    chain_id: u64,
    subjects: &[Subject],
    up_to: u64,
) -> StoreResult<BTreeMap<String, Loaded>> {
    let mut loaded = unloaded(subjects);
    payments(conn, subjects, up_to, &mut loaded).await?;
    masumi::released_escrows(conn, subjects, up_to, &mut loaded).await?;
    outflows::outflows(conn, chain_id, subjects, up_to, &mut loaded).await?;
    sides(conn, chain_id, subjects, up_to, Activity::Read, &mut loaded).await?;
    Ok(loaded)
}

/// The availability of each agent in `loaded` (its endpoints' 7-day uptime, 0–100, as this
/// instance probed them), for rules that weigh it; agents never probed have none.
pub(super) async fn availability(
    conn: &mut AnyConnection,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let keys: Vec<&str> = loaded.keys().map(String::as_str).collect();
    if keys.is_empty() {
        return Ok(());
    }
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT agent_key, uptime_7d FROM {} WHERE uptime_7d IS NOT NULL AND agent_key",
        agent_liveness::NAME
    ));
    push_in(&mut query, keys);
    let rows: Vec<(String, f64)> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading agents' availability")?;
    for (key, uptime) in rows {
        if let Some(entry) = loaded.get_mut(&key) {
            entry.facts.availability = Some(uptime * 100.0);
        }
    }
    Ok(())
}

/// The facts that decide whether a payment to each of `subjects` counts (its owner, operator
/// and wallet history) and nothing else: no payments, outflows, feedback or validations, so
/// judging a page of payments costs the same however much else an agent was sent.
pub(super) async fn side_facts(
    conn: &mut AnyConnection,
    chain_id: u64,
    subjects: &[Subject],
) -> StoreResult<BTreeMap<String, Loaded>> {
    let mut loaded = unloaded(subjects);
    sides(
        conn,
        chain_id,
        subjects,
        u64::MAX,
        Activity::Skipped,
        &mut loaded,
    )
    .await?;
    Ok(loaded)
}

/// Nothing loaded yet for each of `subjects`.
fn unloaded(subjects: &[Subject]) -> BTreeMap<String, Loaded> {
    subjects
        .iter()
        .map(|s| (s.key.clone(), Loaded::default()))
        .collect()
}

/// Whether [`sides`] reads the ERC-8004 feedback and validations too.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Activity {
    Read,
    Skipped,
}

/// The agents' own side (ERC-8004 owners, approvals and wallets; agent contracts' facts; Masumi
/// NFTs' holders) and,
/// when `activity` says so, their feedback and validations.
async fn sides(
    conn: &mut AnyConnection,
    chain_id: u64,
    subjects: &[Subject],
    up_to: u64,
    activity: Activity,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
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
        erc8004_side(conn, &scope, tokens, loaded).await?;
        if activity == Activity::Read {
            feedback(conn, &scope, tokens, loaded).await?;
            validations(conn, &scope, tokens, loaded).await?;
        }
    }
    let contracts: BTreeMap<&str, &str> = subjects
        .iter()
        .filter(|s| s.erc8004.is_none())
        .filter_map(|s| Some((s.contract.as_deref()?, s.key.as_str())))
        .collect();
    if !contracts.is_empty() {
        contract_facts(conn, chain_id, up_to, &contracts, loaded).await?;
    }
    masumi::holders(conn, subjects, up_to, loaded).await?;
    Ok(())
}

packed_row! {
    /// A `payments` row as reputation reads it.
    struct PackedPayment {
        agent_key: String = payments::agent_key,
        payer: String = payments::payer,
        payee: String = payments::payee,
        token: String = payments::token,
        amount: String = payments::amount,
        timestamp: i64 = payments::timestamp,
        /// 1 when an x402 scheme settled it.
        x402: i64 = "CASE WHEN scheme IS NULL THEN 0 ELSE 1 END",
        tx_hash: String = payments::tx_hash,
    }
}

async fn payments(
    conn: &mut AnyConnection,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {} FROM {payments_table} WHERE block_number <= ",
        packed_rows::<PackedPayment>(Dialect::of(conn)),
        payments_table = payments::NAME
    ));
    query.push_bind(sql_bound(up_to));
    query.push(" AND agent_key");
    push_in(&mut query, subjects.iter().map(|s| s.key.as_str()));
    let rows: Vec<(i64, i64, PackedPayment)> =
        fetch_packed_in_chain_order(conn, query, "reading agents' payments").await?;
    for (block, log, row) in rows {
        let PackedPayment {
            agent_key: key,
            payer,
            payee,
            token,
            amount,
            timestamp,
            x402,
            tx_hash,
        } = row;
        let Some(entry) = loaded.get_mut(&key) else {
            continue;
        };
        entry.saw(block)?;
        let fields = PaymentFields {
            payer: &payer,
            payee: &payee,
            token: &token,
            amount: &amount,
            block,
            log_index: log,
            timestamp,
            x402: x402 != 0,
            tx_hash: &tx_hash,
        };
        entry.facts.payments.push(fields.parse()?);
    }
    Ok(())
}
