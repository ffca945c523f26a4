//! Reading the facts an agent's reputation depends on, for many agents at once: payments, the
//! owner, operator and wallet history, outflows, feedback, validations and ratings, each up to a
//! block. A few queries per few hundred agents, never a round of queries per agent.

use crate::reputation::{
    AgentFacts, FeedbackEntry, Outflow, Payment, Rating, SideChange, ValidationResponse,
};
use crate::store::agents::wallet_from_metadata;
use crate::store::sql::{in_chain_order, push_in};
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};

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

/// One ERC-8004 registry's facts up to a block.
struct Scope<'a> {
    chain_id: u64,
    registry: &'a str,
    up_to: u64,
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

/// A table of ERC-8004 facts and its index by (chain, registry, token).
#[derive(Clone, Copy)]
struct TokenTable {
    name: &'static str,
    by_token: &'static str,
}

const REGISTRATIONS: TokenTable = TokenTable {
    name: "identity_registrations",
    by_token: "identity_registrations_token",
};
const TRANSFERS: TokenTable = TokenTable {
    name: "identity_transfers",
    by_token: "identity_transfers_token",
};
const METADATA: TokenTable = TokenTable {
    name: "identity_metadata",
    by_token: "identity_metadata_token",
};
const APPROVALS: TokenTable = TokenTable {
    name: "identity_approvals",
    by_token: "identity_approvals_token",
};
const FEEDBACK: TokenTable = TokenTable {
    name: "feedback",
    by_token: "feedback_agent",
};
const REVOCATIONS: TokenTable = TokenTable {
    name: "feedback_revocations",
    by_token: "feedback_revocations_feedback",
};
const RESPONSES: TokenTable = TokenTable {
    name: "feedback_responses",
    by_token: "feedback_responses_feedback",
};
const VALIDATION_REQUESTS: TokenTable = TokenTable {
    name: "validation_requests",
    by_token: "validation_requests_agent",
};
const VALIDATION_RESPONSES: TokenTable = TokenTable {
    name: "validation_responses",
    by_token: "validation_responses_agent",
};

/// Rows of `table` for `tokens` of the scope's registry, in chain order (looked up by the
/// token index, as `store::sql` explains).
async fn of_tokens(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    table: TokenTable,
    columns: &str,
) -> StoreResult<Vec<SqliteRow>> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT token_id, block_number, log_index, {columns} FROM {} INDEXED BY {}
         WHERE chain_id = ",
        table.name, table.by_token
    ));
    query.push_bind(scope.chain_id as i64);
    query.push(" AND registry = ");
    query.push_bind(scope.registry);
    query.push(" AND block_number <= ");
    query.push_bind(clamp(scope.up_to));
    query.push(" AND token_id");
    push_in(&mut query, tokens.keys().copied());
    let rows = query
        .build()
        .fetch_all(&mut *conn)
        .await
        .context("reading ERC-8004 facts for reputation")?;
    Ok(in_chain_order(rows))
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

/// Owner, approval and wallet history of ERC-8004 agents, and the operators every owner they
/// ever had approved for all its agents.
async fn erc8004_side(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut owners_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (table, column) in [(REGISTRATIONS, "owner"), (TRANSFERS, "to_address")] {
        for row in of_tokens(conn, scope, tokens, table, column).await? {
            let token: &str = row.get("token_id");
            let (Some(key), Some(owner)) = (tokens.get(token), address(&row, column)) else {
                continue;
            };
            owners_of.entry(key).or_default().insert(row.get(column));
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.saw(row.get("block_number"));
            entry
                .facts
                .side
                .push(position(&row), SideChange::Owner(owner));
        }
    }
    let rows = of_tokens(conn, scope, tokens, METADATA, "key, value").await?;
    for row in rows {
        let token: &str = row.get("token_id");
        let Some(key) = tokens.get(token) else {
            continue;
        };
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        if row.get::<&str, _>("key") == "agentWallet" {
            let wallet = wallet_from_metadata(row.get("value")).filter(|w| !w.is_zero());
            entry
                .facts
                .side
                .push(position(&row), SideChange::Wallet(wallet));
        }
    }
    let rows = of_tokens(conn, scope, tokens, APPROVALS, "operator, approved").await?;
    for row in rows {
        let token: &str = row.get("token_id");
        let Some(key) = tokens.get(token) else {
            continue;
        };
        let approved =
            address(&row, "operator").filter(|a| row.get::<bool, _>("approved") && !a.is_zero());
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        entry
            .facts
            .side
            .push(position(&row), SideChange::Approved(approved));
    }
    let owners: BTreeSet<&str> = owners_of.values().flatten().map(String::as_str).collect();
    if owners.is_empty() {
        return Ok(());
    }
    let mut query = QueryBuilder::<Sqlite>::new(
        "SELECT owner, operator, approved, block_number, log_index
         FROM identity_approvals INDEXED BY identity_approvals_owner
         WHERE token_id IS NULL AND chain_id = ",
    );
    query.push_bind(scope.chain_id as i64);
    query.push(" AND registry = ");
    query.push_bind(scope.registry);
    query.push(" AND block_number <= ");
    query.push_bind(clamp(scope.up_to));
    query.push(" AND owner");
    push_in(&mut query, owners.iter().copied());
    let rows = query
        .build()
        .fetch_all(&mut *conn)
        .await
        .context("reading operator approvals for reputation")?;
    for row in rows {
        let (Some(owner), Some(operator)) = (address(&row, "owner"), address(&row, "operator"))
        else {
            continue;
        };
        let owner_hex: &str = row.get("owner");
        let change = SideChange::OperatorForAll {
            owner,
            operator,
            approved: row.get("approved"),
        };
        for (key, owners) in &owners_of {
            if owners.contains(owner_hex) {
                let entry = loaded.get_mut(*key).expect("subjects were loaded");
                entry.facts.side.push(position(&row), change);
            }
        }
    }
    Ok(())
}

/// Feedback with the revocations made up to the block.
async fn feedback(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let revocations = of_tokens(conn, scope, tokens, REVOCATIONS, "client, feedback_index").await?;
    let mut revoked: BTreeSet<(String, String, i64)> = BTreeSet::new();
    for row in &revocations {
        let token: String = row.get("token_id");
        if let Some(key) = tokens.get(token.as_str()) {
            loaded
                .get_mut(*key)
                .expect("subjects were loaded")
                .saw(row.get("block_number"));
        }
        revoked.insert((token, row.get("client"), row.get("feedback_index")));
    }
    for row in of_tokens(conn, scope, tokens, RESPONSES, "responder").await? {
        if let Some(key) = tokens.get(row.get::<&str, _>("token_id")) {
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.saw(row.get("block_number"));
            entry.facts.feedback_responses += 1;
        }
    }
    let rows = of_tokens(
        conn,
        scope,
        tokens,
        FEEDBACK,
        "client, feedback_index, value, value_decimals, tag1, tag2",
    )
    .await?;
    for row in rows {
        let token: String = row.get("token_id");
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        let client: String = row.get("client");
        let index: Option<i64> = row.get("feedback_index");
        let is_revoked =
            index.is_some_and(|index| revoked.contains(&(token.clone(), client.clone(), index)));
        let parsed = (|| {
            Some(FeedbackEntry {
                client: client.parse().ok()?,
                value: row.get::<&str, _>("value").parse().ok()?,
                decimals: u8::try_from(row.get::<i64, _>("value_decimals")).ok()?,
                tag1: row.get("tag1"),
                tag2: row.get("tag2"),
                revoked: is_revoked,
            })
        })();
        if let Some(entry_value) = parsed {
            entry.facts.feedback.push(entry_value);
        }
    }
    Ok(())
}

/// Validation requests and every response.
async fn validations(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    for row in of_tokens(conn, scope, tokens, VALIDATION_REQUESTS, "request_hash").await? {
        if let Some(key) = tokens.get(row.get::<&str, _>("token_id")) {
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.saw(row.get("block_number"));
            entry
                .facts
                .validation_requests
                .push(row.get("request_hash"));
        }
    }
    let rows = of_tokens(
        conn,
        scope,
        tokens,
        VALIDATION_RESPONSES,
        "request_hash, response",
    )
    .await?;
    for row in rows {
        let Some(key) = tokens.get(row.get::<&str, _>("token_id")) else {
            continue;
        };
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        if let Ok(response) = u8::try_from(row.get::<i64, _>("response")) {
            entry.facts.validation_responses.push(ValidationResponse {
                request_hash: row.get("request_hash"),
                response,
                position: position(&row),
            });
        }
    }
    Ok(())
}

/// Owner history, withdrawals (outflows) and ratings of agent contracts.
async fn contract_facts(
    conn: &mut SqliteConnection,
    chain_id: u64,
    up_to: u64,
    contracts: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    // Each query names the table's agent index (see `store::sql`).
    let select = |sql: &str| {
        let mut query = QueryBuilder::<Sqlite>::new(sql);
        query.push_bind(chain_id as i64);
        query.push(" AND block_number <= ");
        query.push_bind(clamp(up_to));
        query.push(" AND agent");
        push_in(&mut query, contracts.keys().copied());
        query
    };
    let mut named_owner: BTreeSet<String> = BTreeSet::new();
    let mut enrolled_by: Vec<(String, (u64, u64), Address)> = Vec::new();
    let sources = [
        "SELECT agent, value AS owner, block_number, log_index
         FROM agent_contract_events INDEXED BY agent_contract_events_agent WHERE kind = 'owner' AND chain_id = ",
        "SELECT agent, owner, block_number, log_index
         FROM agent_snapshots INDEXED BY agent_snapshots_agent WHERE owner IS NOT NULL AND chain_id = ",
        "SELECT agent, actor AS owner, block_number, log_index
         FROM registry_events INDEXED BY registry_events_agent WHERE kind = 'registered' AND chain_id = ",
    ];
    for (n, sql) in sources.iter().enumerate() {
        let rows = select(sql)
            .build()
            .fetch_all(&mut *conn)
            .await
            .context("reading agent contracts' owners for reputation")?;
        let rows = in_chain_order(rows);
        for row in rows {
            let agent: String = row.get("agent");
            let Some(owner) = address(&row, "owner") else {
                continue;
            };
            if n == 2 {
                enrolled_by.push((agent, position(&row), owner));
                continue;
            }
            let Some(key) = contracts.get(agent.as_str()) else {
                continue;
            };
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.saw(row.get("block_number"));
            entry
                .facts
                .side
                .push(position(&row), SideChange::Owner(owner));
            named_owner.insert(agent);
        }
    }
    // The enrolling account stands as owner of a contract that never named one.
    for (agent, at, owner) in enrolled_by {
        if named_owner.contains(&agent) {
            continue;
        }
        if let Some(key) = contracts.get(agent.as_str()) {
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.saw(at.0 as i64);
            entry.facts.side.push(at, SideChange::Owner(owner));
        }
    }
    let rows = select(
        "SELECT agent, to_address, block_number, log_index,
           (SELECT block_timestamp FROM events e WHERE e.chain_id = w.chain_id
              AND e.block_number = w.block_number AND e.log_index = w.log_index) AS timestamp
         FROM withdrawals w INDEXED BY withdrawals_agent WHERE chain_id = ",
    )
    .build()
    .fetch_all(&mut *conn)
    .await
    .context("reading agent contracts' withdrawals")?;
    let rows = in_chain_order(rows);
    for row in rows {
        let Some(key) = contracts.get(row.get::<&str, _>("agent")) else {
            continue;
        };
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        if let Some(to) = address(&row, "to_address") {
            entry.facts.outflows.push(Outflow {
                to,
                timestamp: row.get::<Option<i64>, _>("timestamp").unwrap_or(0) as u64,
            });
        }
    }
    let rows = select(
        "SELECT agent, rater, score, block_number, log_index
         FROM ratings INDEXED BY ratings_agent WHERE chain_id = ",
    )
    .build()
    .fetch_all(&mut *conn)
    .await
    .context("reading agent contracts' ratings")?;
    let rows = in_chain_order(rows);
    for row in rows {
        let Some(key) = contracts.get(row.get::<&str, _>("agent")) else {
            continue;
        };
        let entry = loaded.get_mut(*key).expect("subjects were loaded");
        entry.saw(row.get("block_number"));
        if let (Some(rater), Ok(score)) = (
            address(&row, "rater"),
            u8::try_from(row.get::<i64, _>("score")),
        ) {
            entry.facts.ratings.push(Rating {
                rater,
                score,
                position: position(&row),
            });
        }
    }
    Ok(())
}
