//! The ERC-8004 facts of an agent's reputation: owner, approval and wallet history, the
//! operators its owners approved for all, feedback with revocations and responses, and
//! validation requests with every response, for a few hundred tokens of one registry at a time.

use super::{Loaded, address, clamp, position, seen};
use crate::reputation::{FeedbackEntry, SideChange, ValidationResponse};
use crate::store::agents::wallet_from_metadata;
use crate::store::sql::{fetch_in_chain_order, push_in};
use crate::store::{QueryContext, StoreResult};
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};

/// One ERC-8004 registry's facts up to a block.
pub(super) struct Scope<'a> {
    pub(super) chain_id: u64,
    pub(super) registry: &'a str,
    pub(super) up_to: u64,
}

/// Rows of `table` for `tokens` of the scope's registry, in chain order (looked up by the
/// token index, as `store::sql` explains).
async fn of_tokens(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    table: &str,
    columns: &str,
) -> StoreResult<Vec<SqliteRow>> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT token_id, block_number, log_index, {columns} FROM {table} INDEXED BY {}
         WHERE chain_id = ",
        token_index(table)
    ));
    query.push_bind(scope.chain_id as i64);
    query.push(" AND registry = ");
    query.push_bind(scope.registry);
    query.push(" AND block_number <= ");
    query.push_bind(clamp(scope.up_to));
    query.push(" AND token_id");
    push_in(&mut query, tokens.keys().copied());
    fetch_in_chain_order(conn, query, "reading ERC-8004 facts for reputation").await
}

/// The index of `table` by (chain, registry, token id), as the migrations name it.
fn token_index(table: &str) -> String {
    match table {
        "feedback" | "validation_requests" | "validation_responses" => format!("{table}_agent"),
        "feedback_revocations" | "feedback_responses" => format!("{table}_feedback"),
        _ => format!("{table}_token"),
    }
}

/// Owner, approval and wallet history of ERC-8004 agents, and the operators every owner they
/// ever had approved for all its agents.
pub(super) async fn erc8004_side(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut owners_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (table, column) in [
        ("identity_registrations", "owner"),
        ("identity_transfers", "to_address"),
    ] {
        for row in of_tokens(conn, scope, tokens, table, column).await? {
            let token: &str = row.get("token_id");
            let (Some(key), Some(owner)) = (tokens.get(token), address(&row, column)) else {
                continue;
            };
            owners_of.entry(key).or_default().insert(row.get(column));
            let entry = seen(loaded, key, row.get("block_number"));
            entry
                .facts
                .side
                .push(position(&row), SideChange::Owner(owner));
        }
    }
    let rows = of_tokens(conn, scope, tokens, "identity_metadata", "key, value").await?;
    for row in rows {
        let token: &str = row.get("token_id");
        let Some(key) = tokens.get(token) else {
            continue;
        };
        let entry = seen(loaded, key, row.get("block_number"));
        if row.get::<&str, _>("key") == "agentWallet" {
            let wallet = wallet_from_metadata(row.get("value")).filter(|w| !w.is_zero());
            entry
                .facts
                .side
                .push(position(&row), SideChange::Wallet(wallet));
        }
    }
    let rows = of_tokens(
        conn,
        scope,
        tokens,
        "identity_approvals",
        "operator, approved",
    )
    .await?;
    for row in rows {
        let token: &str = row.get("token_id");
        let Some(key) = tokens.get(token) else {
            continue;
        };
        let approved =
            address(&row, "operator").filter(|a| row.get::<bool, _>("approved") && !a.is_zero());
        let entry = seen(loaded, key, row.get("block_number"));
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
pub(super) async fn feedback(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let revocations = of_tokens(
        conn,
        scope,
        tokens,
        "feedback_revocations",
        "client, feedback_index",
    )
    .await?;
    let mut revoked: BTreeSet<(String, String, i64)> = BTreeSet::new();
    for row in &revocations {
        let token: String = row.get("token_id");
        if let Some(key) = tokens.get(token.as_str()) {
            seen(loaded, key, row.get("block_number"));
        }
        revoked.insert((token, row.get("client"), row.get("feedback_index")));
    }
    for row in of_tokens(conn, scope, tokens, "feedback_responses", "responder").await? {
        if let Some(key) = tokens.get(row.get::<&str, _>("token_id")) {
            let entry = seen(loaded, key, row.get("block_number"));
            entry.facts.feedback_responses += 1;
        }
    }
    let rows = of_tokens(
        conn,
        scope,
        tokens,
        "feedback",
        "client, feedback_index, value, value_decimals, tag1, tag2",
    )
    .await?;
    for row in rows {
        let token: String = row.get("token_id");
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, row.get("block_number"));
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
pub(super) async fn validations(
    conn: &mut SqliteConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    for row in of_tokens(conn, scope, tokens, "validation_requests", "request_hash").await? {
        if let Some(key) = tokens.get(row.get::<&str, _>("token_id")) {
            let entry = seen(loaded, key, row.get("block_number"));
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
        "validation_responses",
        "request_hash, response",
    )
    .await?;
    for row in rows {
        let Some(key) = tokens.get(row.get::<&str, _>("token_id")) else {
            continue;
        };
        let entry = seen(loaded, key, row.get("block_number"));
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
