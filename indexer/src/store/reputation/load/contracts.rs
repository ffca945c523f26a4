//! The facts of an agent contract's reputation: its owner history (its own events, snapshots,
//! else the account that enrolled it), withdrawals and ratings, for a few hundred contracts at once.

use super::{Loaded, address, clamp, position, seen};
use crate::reputation::{Outflow, Rating, SideChange};
use crate::store::StoreResult;
use crate::store::sql::{fetch_in_chain_order, push_in};
use alloy::primitives::Address;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::collections::{BTreeMap, BTreeSet};

/// Owner history, withdrawals (outflows) and ratings of agent contracts.
pub(super) async fn contract_facts(
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
        let rows = fetch_in_chain_order(
            conn,
            select(sql),
            "reading agent contracts' owners for reputation",
        )
        .await?;
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
            let entry = seen(loaded, key, row.get("block_number"));
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
            let entry = seen(loaded, key, at.0 as i64);
            entry.facts.side.push(at, SideChange::Owner(owner));
        }
    }
    let withdrawals = select(
        "SELECT agent, to_address, block_number, log_index,
           (SELECT block_timestamp FROM events e WHERE e.chain_id = w.chain_id
              AND e.block_number = w.block_number AND e.log_index = w.log_index) AS timestamp
         FROM withdrawals w INDEXED BY withdrawals_agent WHERE chain_id = ",
    );
    let rows =
        fetch_in_chain_order(conn, withdrawals, "reading agent contracts' withdrawals").await?;
    for row in rows {
        let Some(key) = contracts.get(row.get::<&str, _>("agent")) else {
            continue;
        };
        let entry = seen(loaded, key, row.get("block_number"));
        if let Some(to) = address(&row, "to_address") {
            entry.facts.outflows.push(Outflow {
                to,
                timestamp: row.get::<Option<i64>, _>("timestamp").unwrap_or(0) as u64,
            });
        }
    }
    let ratings = select(
        "SELECT agent, rater, score, block_number, log_index
         FROM ratings INDEXED BY ratings_agent WHERE chain_id = ",
    );
    let rows = fetch_in_chain_order(conn, ratings, "reading agent contracts' ratings").await?;
    for row in rows {
        let Some(key) = contracts.get(row.get::<&str, _>("agent")) else {
            continue;
        };
        let entry = seen(loaded, key, row.get("block_number"));
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
