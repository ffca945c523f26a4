//! The facts of an agent contract's reputation: its owner history (its own events, snapshots,
//! else the account that enrolled it), withdrawals and ratings, for a few hundred contracts at once.

use super::{Loaded, at, seen};
use crate::primitives::sql_bound;
use crate::reputation::{Outflow, Rating, SideChange};
use crate::store::Dialect;
use crate::store::StoreResult;
use crate::store::decode;
use crate::store::decode::int;
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows, push_in};
use alloy::primitives::Address;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Owner history, withdrawals (outflows) and ratings of agent contracts.
pub(super) async fn contract_facts(
    conn: &mut AnyConnection,
    chain_id: u64,
    up_to: u64,
    contracts: &BTreeMap<&str, &str>,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    // Each query names the table's agent index (see `store::sql`); `{rows}` packs the columns.
    let chain = int("chain_id", chain_id)?;
    let dialect = Dialect::of(conn);
    let select = |sql: &str, columns: &str| {
        let mut query =
            QueryBuilder::<Any>::new(sql.replace("{rows}", &packed_rows(dialect, columns)));
        query.push_bind(chain);
        query.push(" AND block_number <= ");
        query.push_bind(sql_bound(up_to));
        query.push(" AND agent");
        push_in(&mut query, contracts.keys().copied());
        query
    };
    let mut named_owner: BTreeSet<String> = BTreeSet::new();
    let mut enrolled_by: Vec<(String, (u64, u64), Address)> = Vec::new();
    let sources = [
        (
            "SELECT {rows} FROM agent_contract_events INDEXED BY agent_contract_events_agent
             WHERE kind = 'owner' AND chain_id = ",
            "agent, value",
        ),
        (
            "SELECT {rows} FROM agent_snapshots INDEXED BY agent_snapshots_agent
             WHERE owner IS NOT NULL AND chain_id = ",
            "agent, owner",
        ),
        (
            "SELECT {rows} FROM registry_events INDEXED BY registry_events_agent
             WHERE kind = 'registered' AND chain_id = ",
            "agent, actor",
        ),
    ];
    for (n, (sql, columns)) in sources.iter().enumerate() {
        let rows: Vec<(i64, i64, (String, Option<String>))> = fetch_packed_in_chain_order(
            conn,
            select(sql, columns),
            "reading agent contracts' owners for reputation",
        )
        .await?;
        for (block, log, (agent, owner)) in rows {
            let table = [
                "agent_contract_events",
                "agent_snapshots",
                "registry_events",
            ][n];
            let column = ["value", "owner", "actor"][n];
            let Some(owner) = decode::parse_opt::<Address>(table, column, owner.as_deref())? else {
                continue;
            };
            if n == 2 {
                enrolled_by.push((agent, at(block, log)?, owner));
                continue;
            }
            let Some(key) = contracts.get(agent.as_str()) else {
                continue;
            };
            let entry = seen(loaded, key, block)?;
            entry
                .facts
                .side
                .push(at(block, log)?, SideChange::Owner(owner));
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
            entry.last_block = entry.last_block.max(at.0);
            entry.facts.side.push(at, SideChange::Owner(owner));
        }
    }
    let withdrawals = select(
        "SELECT {rows} FROM withdrawals w INDEXED BY withdrawals_agent WHERE chain_id = ",
        "agent, to_address,
         (SELECT block_timestamp FROM events e WHERE e.chain_id = w.chain_id
            AND e.block_number = w.block_number AND e.log_index = w.log_index)",
    );
    type Withdrawal = (String, String, Option<i64>);
    let rows: Vec<(i64, i64, Withdrawal)> =
        fetch_packed_in_chain_order(conn, withdrawals, "reading agent contracts' withdrawals")
            .await?;
    for (block, _, (agent, to, timestamp)) in rows {
        let Some(key) = contracts.get(agent.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        entry.facts.outflows.push(Outflow {
            to: decode::parse("withdrawals", "to_address", &to)?,
            // A withdrawal always has its event stored; 0 only if that row were missing.
            timestamp: decode::uint("events", "block_timestamp", timestamp.unwrap_or(0))?,
        });
    }
    let ratings = select(
        "SELECT {rows} FROM ratings INDEXED BY ratings_agent WHERE chain_id = ",
        "agent, rater, score",
    );
    let rows: Vec<(i64, i64, (String, String, i64))> =
        fetch_packed_in_chain_order(conn, ratings, "reading agent contracts' ratings").await?;
    for (block, log, (agent, rater, score)) in rows {
        let Some(key) = contracts.get(agent.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        entry.facts.ratings.push(Rating {
            rater: decode::parse("ratings", "rater", &rater)?,
            score: decode::parse("ratings", "score", &score.to_string())?,
            position: at(block, log)?,
        });
    }
    Ok(())
}
