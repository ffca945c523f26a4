//! The ERC-8004 facts of an agent's reputation: owner, approval and wallet history, the
//! operators its owners approved for all, feedback with revocations, responses and the proofs
//! of payment its files cite, and
//! validation requests with every response, for a few hundred tokens of one registry at a time.

use super::feedback_files::{self, OnChainFeedback};
use super::{Loaded, at, seen};
use crate::primitives::sql_bound;
use crate::reputation::{FeedbackEntry, SideChange, ValidationResponse};
use crate::schema::{
    feedback, feedback_responses, feedback_revocations, identity_approvals, identity_metadata,
    identity_registrations, identity_transfers, validation_requests, validation_responses,
};
use crate::store::Dialect;
use crate::store::StoreResult;
use crate::store::agents::wallet_from_metadata;
use crate::store::decode;
use crate::store::decode::int;
use crate::store::identity_rows::{ApprovalRow, OperatorForAllRow};
use crate::store::in_list::push_in;
use crate::store::packed_row::{PackedRow, PerDialect, packed_row};
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows, sort_in_chain_order};
use alloy::primitives::{Address, hex};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Values looked up per statement (a list padded to at most this many, within SQLite's 32,766
/// bound values; one token can pass through any number of owners).
const VALUES_PER_QUERY: usize = 8_192;

/// One ERC-8004 registry's facts up to a block.
pub(super) struct Scope<'a> {
    pub(super) chain_id: u64,
    pub(super) registry: &'a str,
    pub(super) up_to: u64,
}

/// Rows of `table` for `tokens` of the scope's registry as `T` (whose fields select from
/// `table`), in chain order (looked up by the token index, as `store::sql` explains): each
/// row's block, log index and `T`.
async fn of_tokens<T: PackedRow>(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    table: &str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let tokens: Vec<&str> = tokens.keys().copied().collect();
    let by_token = Lookup {
        table,
        index: &token_index(table),
        also: "",
        column: "token_id",
    };
    let context = "reading ERC-8004 facts for reputation";
    in_scope(conn, scope, &by_token, &tokens, context).await
}

/// Rows of one table in a registry's scope whose `column` is one of a list of values.
struct Lookup<'a> {
    table: &'a str,
    /// The index the lookup must use (see `store::sql`).
    index: &'a str,
    /// A condition ending in ` AND `, or nothing.
    also: &'a str,
    column: &'a str,
}

/// The rows `lookup` finds for `values` in the scope as `T`, in chain order, read
/// [`VALUES_PER_QUERY`] values at a time.
async fn in_scope<T: PackedRow>(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    lookup: &Lookup<'_>,
    values: &[&str],
    context: &'static str,
) -> StoreResult<Vec<(i64, i64, T)>> {
    let dialect = Dialect::of(conn);
    let mut rows = Vec::new();
    for chunk in values.chunks(VALUES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {}{} WHERE {}chain_id = ",
            packed_rows::<T>(dialect),
            lookup.table,
            dialect.index_hint(lookup.index),
            lookup.also,
        ));
        query.push_bind(int("chain_id", scope.chain_id)?);
        query.push(" AND registry = ");
        query.push_bind(scope.registry);
        query.push(" AND block_number <= ");
        query.push_bind(sql_bound(scope.up_to));
        query.push(format!(" AND {}", lookup.column));
        push_in(&mut query, chunk.iter().copied());
        rows.extend(fetch_packed_in_chain_order(conn, query, context).await?);
    }
    sort_in_chain_order(&mut rows);
    Ok(rows)
}

/// The index of `table` by (chain, registry, token id), as the migrations name it.
fn token_index(table: &str) -> String {
    match table {
        feedback::NAME | validation_requests::NAME | validation_responses::NAME => {
            format!("{table}_agent")
        }
        feedback_revocations::NAME | feedback_responses::NAME => format!("{table}_feedback"),
        _ => format!("{table}_token"),
    }
}

/// Owner, approval and wallet history of ERC-8004 agents, and the operators every owner they
/// ever had approved for all its agents.
pub(super) async fn erc8004_side(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let mut owners_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let registered: Vec<(i64, i64, RegisteredOwner)> =
        of_tokens(conn, scope, tokens, identity_registrations::NAME).await?;
    let transferred: Vec<(i64, i64, TransferredTo)> =
        of_tokens(conn, scope, tokens, identity_transfers::NAME).await?;
    let owner_changes = registered
        .into_iter()
        .map(|(block, log, row)| (block, log, OwnerChange::from(row)))
        .chain(
            transferred
                .into_iter()
                .map(|(block, log, row)| (block, log, OwnerChange::from(row))),
        );
    for (block, log, OwnerChange { token, owner_hex }) in owner_changes {
        let (Some(key), Ok(owner)) = (tokens.get(token.as_str()), owner_hex.parse()) else {
            continue;
        };
        owners_of.entry(key).or_default().insert(owner_hex);
        let entry = seen(loaded, key, block)?;
        entry
            .facts
            .side
            .push(at(block, log)?, SideChange::Owner(owner));
    }
    // Every metadata change counts as one of the agent's facts; only the wallet's value matters.
    let rows: Vec<(i64, i64, MetadataChange)> =
        of_tokens(conn, scope, tokens, identity_metadata::NAME).await?;
    for (block, log, row) in rows {
        let MetadataChange {
            token_id: token,
            wallet_hex,
        } = row;
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        if let Some(wallet_hex) = wallet_hex {
            let value = hex::decode(&wallet_hex).map_err(|error| {
                decode::corrupt("identity_metadata", "value", &wallet_hex, error)
            })?;
            // A value that is not an address clears the wallet, as on chain.
            let wallet = wallet_from_metadata(&value).filter(|w| !w.is_zero());
            entry
                .facts
                .side
                .push(at(block, log)?, SideChange::Wallet(wallet));
        }
    }
    let rows: Vec<(i64, i64, ApprovalRow)> =
        of_tokens(conn, scope, tokens, identity_approvals::NAME).await?;
    for (block, log, row) in rows {
        let ApprovalRow {
            token_id: token,
            operator,
            approved,
        } = row;
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let operator: Address = decode::parse(
            identity_approvals::NAME,
            identity_approvals::operator.name,
            &operator,
        )?;
        let approved = Some(operator).filter(|a| approved != 0 && !a.is_zero());
        let entry = seen(loaded, key, block)?;
        entry
            .facts
            .side
            .push(at(block, log)?, SideChange::Approved(approved));
    }
    let owners: BTreeSet<&str> = owners_of.values().flatten().map(String::as_str).collect();
    if owners.is_empty() {
        return Ok(());
    }
    let owners: Vec<&str> = owners.into_iter().collect();
    let for_all_by_owner = Lookup {
        table: identity_approvals::NAME,
        index: "identity_approvals_owner",
        also: "token_id IS NULL AND ",
        column: "owner",
    };
    let context = "reading operator approvals for reputation";
    let rows: Vec<(i64, i64, OperatorForAllRow)> =
        in_scope(conn, scope, &for_all_by_owner, &owners, context).await?;
    for (block, log, row) in rows {
        let OperatorForAllRow {
            owner: owner_hex,
            operator,
            approved,
        } = row;
        let (Ok(owner), Ok(operator)) = (owner_hex.parse(), operator.parse()) else {
            continue;
        };
        let change = SideChange::OperatorForAll {
            owner,
            operator,
            approved: approved != 0,
        };
        for (key, owners) in &owners_of {
            if owners.contains(&owner_hex) {
                let entry = loaded.get_mut(*key).expect("subjects were loaded");
                entry.facts.side.push(at(block, log)?, change);
            }
        }
    }
    Ok(())
}

/// Feedback with the revocations made up to the block.
pub(super) async fn feedback(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let revocations: Vec<(i64, i64, Revocation)> =
        of_tokens(conn, scope, tokens, feedback_revocations::NAME).await?;
    let mut revoked: BTreeSet<(String, String, i64)> = BTreeSet::new();
    for (block, _, row) in revocations {
        let Revocation {
            token_id: token,
            client,
            feedback_index: index,
        } = row;
        if let Some(key) = tokens.get(token.as_str()) {
            seen(loaded, key, block)?;
        }
        revoked.insert((token, client, index));
    }
    let responses: Vec<(i64, i64, FeedbackResponse)> =
        of_tokens(conn, scope, tokens, feedback_responses::NAME).await?;
    for (block, _, FeedbackResponse { token_id: token }) in responses {
        if let Some(key) = tokens.get(token.as_str()) {
            let entry = seen(loaded, key, block)?;
            entry.facts.feedback_responses += 1;
        }
    }
    let rows: Vec<(i64, i64, FeedbackRow)> = of_tokens(conn, scope, tokens, feedback::NAME).await?;
    let uris: BTreeSet<String> = rows
        .iter()
        .map(|(_, _, row)| row.feedback_uri.trim())
        .filter(|uri| !uri.is_empty())
        .map(str::to_string)
        .collect();
    let files = feedback_files::stored(conn, &uris).await?;
    let registry: Address = decode::parse("feedback", "registry", scope.registry)?;
    for (block, log, row) in rows {
        let FeedbackRow {
            token_id: token,
            client,
            feedback_index: index,
            value,
            value_decimals: decimals,
            tag1,
            tag2,
            timestamp,
            feedback_uri,
            feedback_hash,
        } = row;
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let client_address: Address = decode::parse("feedback", "client", &client)?;
        let proof = match files.get(feedback_uri.trim()) {
            Some(file) => feedback_files::cited(
                file,
                &OnChainFeedback {
                    chain_id: scope.chain_id,
                    registry,
                    token_id: &token,
                    client: client_address,
                    uri: feedback_uri.trim(),
                    hash: decode::parse("feedback", "feedback_hash", &feedback_hash)?,
                },
            ),
            None => None,
        };
        let entry = seen(loaded, key, block)?;
        let revoked = index.is_some_and(|index| revoked.contains(&(token, client.clone(), index)));
        entry.facts.feedback.push(FeedbackEntry {
            client: client_address,
            value: decode::parse("feedback", "value", &value)?,
            decimals: decode::parse("feedback", "value_decimals", &decimals.to_string())?,
            tag1,
            tag2,
            revoked,
            position: at(block, log)?,
            timestamp: decode::uint("feedback", "timestamp", timestamp)?,
            proof,
        });
    }
    Ok(())
}

/// Validation requests and every response.
pub(super) async fn validations(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    tokens: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let requests: Vec<(i64, i64, ValidationRequest)> =
        of_tokens(conn, scope, tokens, validation_requests::NAME).await?;
    for (block, _, row) in requests {
        let ValidationRequest {
            token_id: token,
            request_hash,
        } = row;
        if let Some(key) = tokens.get(token.as_str()) {
            let entry = seen(loaded, key, block)?;
            entry.facts.validation_requests.push(request_hash);
        }
    }
    let responses: Vec<(i64, i64, ValidationResponseRow)> =
        of_tokens(conn, scope, tokens, validation_responses::NAME).await?;
    for (block, log, row) in responses {
        let ValidationResponseRow {
            token_id: token,
            request_hash,
            response,
        } = row;
        let Some(key) = tokens.get(token.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        if let Ok(response) = u8::try_from(response) {
            entry.facts.validation_responses.push(ValidationResponse {
                request_hash,
                response,
                position: at(block, log)?,
            });
        }
    }
    Ok(())
}

packed_row! {
    /// A token's registration (`identity_registrations`), for its first owner.
    struct RegisteredOwner {
        token_id: String = identity_registrations::token_id,
        owner: String = identity_registrations::owner,
    }
}

packed_row! {
    /// A token changing owner (`identity_transfers`).
    struct TransferredTo {
        token_id: String = identity_transfers::token_id,
        to_address: String = identity_transfers::to_address,
    }
}

/// A token's owner from a registration or a transfer, as stored (lower-case hex).
struct OwnerChange {
    token: String,
    owner_hex: String,
}

impl From<RegisteredOwner> for OwnerChange {
    fn from(row: RegisteredOwner) -> Self {
        Self {
            token: row.token_id,
            owner_hex: row.owner,
        }
    }
}

impl From<TransferredTo> for OwnerChange {
    fn from(row: TransferredTo) -> Self {
        Self {
            token: row.token_id,
            owner_hex: row.to_address,
        }
    }
}

packed_row! {
    /// A metadata entry set on a token (`identity_metadata`): the agentWallet's value in hex (a
    /// BLOB cannot be packed into JSON), NULL for any other key.
    struct MetadataChange {
        token_id: String = identity_metadata::token_id,
        wallet_hex: Option<String> = PerDialect(|dialect| {
            format!(
                "CASE WHEN key = 'agentWallet' THEN {} END",
                dialect.hex(identity_metadata::value.name)
            )
        }),
    }
}

packed_row! {
    /// A client revoking its feedback (`feedback_revocations`).
    struct Revocation {
        token_id: String = feedback_revocations::token_id,
        client: String = feedback_revocations::client,
        feedback_index: i64 = feedback_revocations::feedback_index,
    }
}

packed_row! {
    /// A response to feedback (`feedback_responses`), counted only.
    struct FeedbackResponse {
        token_id: String = feedback_responses::token_id,
    }
}

packed_row! {
    /// A `feedback` row as reputation reads it.
    struct FeedbackRow {
        token_id: String = feedback::token_id,
        client: String = feedback::client,
        feedback_index: Option<i64> = feedback::feedback_index,
        value: String = feedback::value,
        value_decimals: i64 = feedback::value_decimals,
        tag1: String = feedback::tag1,
        tag2: String = feedback::tag2,
        timestamp: i64 = feedback::timestamp,
        feedback_uri: String = feedback::feedback_uri,
        feedback_hash: String = feedback::feedback_hash,
    }
}

packed_row! {
    /// A validation requested for a token (`validation_requests`).
    struct ValidationRequest {
        token_id: String = validation_requests::token_id,
        request_hash: String = validation_requests::request_hash,
    }
}

packed_row! {
    /// A validator's response (`validation_responses`).
    struct ValidationResponseRow {
        token_id: String = validation_responses::token_id,
        request_hash: String = validation_responses::request_hash,
        response: i64 = validation_responses::response,
    }
}

#[cfg(test)]
#[path = "erc8004_tests.rs"]
mod tests;
