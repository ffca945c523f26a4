//! The facts of an agent contract's reputation: its owner history (its own events, snapshots,
//! else the account that enrolled it), withdrawals and ratings, for a few hundred contracts at once.

use super::{Loaded, at, seen};
use crate::primitives::sql_bound;
use crate::reputation::{Outflow, Rating, SideChange};
use crate::schema::{
    Column, agent_contract_events, agent_snapshots, events, ratings, registry_events, withdrawals,
};
use crate::store::Dialect;
use crate::store::StoreResult;
use crate::store::decode;
use crate::store::decode::int;
use crate::store::in_list::push_in;
use crate::store::packed_row::{PackedRow, PerDialect, packed_row};
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows};
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
    let scope = ContractScope {
        chain: int("chain_id", chain_id)?,
        up_to,
        contracts,
    };
    let dialect = Dialect::of(conn);
    let mut named_owner: BTreeSet<String> = BTreeSet::new();
    let named = [
        owners::<OwnerEvent>(
            conn,
            &scope,
            &format!(
                "SELECT {{rows}} FROM {agent_contract_events_table}{hint}
             WHERE kind = 'owner' AND chain_id = ",
                agent_contract_events_table = agent_contract_events::NAME,
                hint = dialect.index_hint("agent_contract_events_agent"),
            ),
        )
        .await?,
        owners::<SnapshotOwner>(
            conn,
            &scope,
            &format!(
                "SELECT {{rows}} FROM {agent_snapshots_table}{hint}
             WHERE owner IS NOT NULL AND chain_id = ",
                agent_snapshots_table = agent_snapshots::NAME,
                hint = dialect.index_hint("agent_snapshots_agent"),
            ),
        )
        .await?,
    ];
    for claim in named.into_iter().flatten() {
        let Some(key) = contracts.get(claim.agent.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, claim.block)?;
        entry
            .facts
            .side
            .push(at(claim.block, claim.log)?, SideChange::Owner(claim.owner));
        named_owner.insert(claim.agent);
    }
    // The enrolling account stands as owner of a contract that never named one.
    let enrolments = owners::<Enrolment>(
        conn,
        &scope,
        &format!(
            "SELECT {{rows}} FROM {registry_events_table}{hint}
         WHERE kind = 'registered' AND chain_id = ",
            registry_events_table = registry_events::NAME,
            hint = dialect.index_hint("registry_events_agent"),
        ),
    )
    .await?;
    for claim in enrolments {
        let at = at(claim.block, claim.log)?;
        if named_owner.contains(&claim.agent) {
            continue;
        }
        if let Some(key) = contracts.get(claim.agent.as_str()) {
            let entry = loaded.get_mut(*key).expect("subjects were loaded");
            entry.last_block = entry.last_block.max(at.0);
            entry.facts.side.push(at, SideChange::Owner(claim.owner));
        }
    }
    let rows: Vec<(i64, i64, Withdrawal)> = scope
        .read(
            conn,
            &format!(
                "SELECT {{rows}} FROM {withdrawals_table} w{hint} WHERE chain_id = ",
                withdrawals_table = withdrawals::NAME,
                hint = dialect.index_hint("withdrawals_agent"),
            ),
            "reading agent contracts' withdrawals",
        )
        .await?;
    for (block, _, row) in rows {
        let Withdrawal {
            agent,
            to_address,
            timestamp,
        } = row;
        let Some(key) = contracts.get(agent.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        entry.facts.outflows.push(Outflow {
            to: decode::parse(withdrawals::NAME, "to_address", &to_address)?,
            // A withdrawal always has its event stored; 0 only if that row were missing.
            timestamp: decode::uint(events::NAME, "block_timestamp", timestamp.unwrap_or(0))?,
        });
    }
    let rows: Vec<(i64, i64, RatingRow)> = scope
        .read(
            conn,
            &format!(
                "SELECT {{rows}} FROM {ratings_table}{hint} WHERE chain_id = ",
                ratings_table = ratings::NAME,
                hint = dialect.index_hint("ratings_agent"),
            ),
            "reading agent contracts' ratings",
        )
        .await?;
    for (block, log, row) in rows {
        let RatingRow {
            agent,
            rater,
            score,
        } = row;
        let Some(key) = contracts.get(agent.as_str()) else {
            continue;
        };
        let entry = seen(loaded, key, block)?;
        entry.facts.ratings.push(Rating {
            rater: decode::parse(ratings::NAME, "rater", &rater)?,
            score: decode::parse(ratings::NAME, "score", &score.to_string())?,
            position: at(block, log)?,
        });
    }
    Ok(())
}

/// The contracts whose facts are read, up to a block, on one chain.
struct ContractScope<'a> {
    chain: i64,
    up_to: u64,
    /// Each contract's agent key, by address.
    contracts: &'a BTreeMap<&'a str, &'a str>,
}

impl ContractScope<'_> {
    /// Runs `{sql} <chain> AND block_number <= <up_to> AND agent IN (<contracts>)` with `{rows}`
    /// in `sql` standing for the [`packed_rows`] of `T` (`sql` names the table's agent index, as
    /// `store::sql` explains, and ends in `chain_id = `); the rows in chain order.
    async fn read<T: PackedRow>(
        &self,
        conn: &mut AnyConnection,
        sql: &str,
        context: &'static str,
    ) -> StoreResult<Vec<(i64, i64, T)>> {
        let rows = packed_rows::<T>(Dialect::of(conn));
        let mut query = QueryBuilder::<Any>::new(sql.replace("{rows}", &rows));
        query.push_bind(self.chain);
        query.push(" AND block_number <= ");
        query.push_bind(sql_bound(self.up_to));
        query.push(" AND agent");
        push_in(&mut query, self.contracts.keys().copied());
        fetch_packed_in_chain_order(conn, query, context).await
    }
}

/// A row that names an agent contract's owner, whichever table states it.
trait NamesOwner: PackedRow {
    /// The column the owner is read from.
    const OWNER: Column;

    /// The contract and its owner's address as stored.
    fn agent_and_owner(self) -> (String, Option<String>);
}

packed_row! {
    /// A contract naming its owner itself (`agent_contract_events` of kind `owner`).
    struct OwnerEvent {
        agent: String = agent_contract_events::agent,
        value: String = agent_contract_events::value,
    }
}

impl NamesOwner for OwnerEvent {
    const OWNER: Column = agent_contract_events::value;

    fn agent_and_owner(self) -> (String, Option<String>) {
        (self.agent, Some(self.value))
    }
}

packed_row! {
    /// A contract's owner as read at an enrolment (`agent_snapshots`).
    struct SnapshotOwner {
        agent: String = agent_snapshots::agent,
        owner: Option<String> = agent_snapshots::owner,
    }
}

impl NamesOwner for SnapshotOwner {
    const OWNER: Column = agent_snapshots::owner;

    fn agent_and_owner(self) -> (String, Option<String>) {
        (self.agent, self.owner)
    }
}

packed_row! {
    /// A contract enrolled in a registry by an account (`registry_events` of kind
    /// `registered`).
    struct Enrolment {
        agent: String = registry_events::agent,
        actor: String = registry_events::actor,
    }
}

impl NamesOwner for Enrolment {
    const OWNER: Column = registry_events::actor;

    fn agent_and_owner(self) -> (String, Option<String>) {
        (self.agent, Some(self.actor))
    }
}

/// An owner a fact names for a contract, and where on the chain.
struct OwnerClaim {
    agent: String,
    owner: Address,
    block: i64,
    log: i64,
}

/// The owners the rows of `T` that `sql` selects name (see [`ContractScope::read`]), in chain
/// order; a row without one is left out.
async fn owners<T: NamesOwner>(
    conn: &mut AnyConnection,
    scope: &ContractScope<'_>,
    sql: &str,
) -> StoreResult<Vec<OwnerClaim>> {
    let rows: Vec<(i64, i64, T)> = scope
        .read(conn, sql, "reading agent contracts' owners for reputation")
        .await?;
    let mut claims = Vec::with_capacity(rows.len());
    for (block, log, row) in rows {
        let (agent, owner) = row.agent_and_owner();
        let column = T::OWNER;
        let owner = decode::parse_opt::<Address>(column.table, column.name, owner.as_deref())?;
        if let Some(owner) = owner {
            claims.push(OwnerClaim {
                agent,
                owner,
                block,
                log,
            });
        }
    }
    Ok(claims)
}

packed_row! {
    /// A withdrawal from a contract (`withdrawals` as `w`), with its block's time.
    struct Withdrawal {
        agent: String = withdrawals::agent,
        to_address: String = withdrawals::to_address,
        timestamp: Option<i64> = PerDialect(|_| format!(
            "(SELECT block_timestamp FROM {events_table} e WHERE e.chain_id = w.chain_id
            AND e.block_number = w.block_number AND e.log_index = w.log_index)",
            events_table = events::NAME,
        )),
    }
}

packed_row! {
    /// A rating of a contract (`ratings`).
    struct RatingRow {
        agent: String = ratings::agent,
        rater: String = ratings::rater,
        score: i64 = ratings::score,
    }
}
