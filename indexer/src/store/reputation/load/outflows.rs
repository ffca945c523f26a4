//! Agents' outflows for their reputation: the token transfers out of the addresses they were
//! bound to. An outflow is stored once, with the address it left (`outflows.from_address`), not
//! once per agent bound there, so an account that registered thousands of agents (each bound to
//! it until it names another wallet) stores what it sends once. Here each is matched to the
//! agents bound to its sender at the transfer by the rule the writer stored it by
//! (`crediting::bound_at`), so an agent gets exactly the outflows it had when they were stored
//! per agent.

use super::{Loaded, Subject, seen};
use crate::primitives::sql_bound;
use crate::reputation::{Outflow, crediting};
use crate::schema::{outflows, payment_bindings};
use crate::store::decode::{self, int};
use crate::store::in_list::push_in;
use crate::store::packed_row::{PackedRow, packed_row};
use crate::store::sql::{fetch_packed_in_chain_order, packed_rows};
use crate::store::{Dialect, StoreResult};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Sender addresses per outflows query.
const ADDRESSES_PER_QUERY: usize = 500;

/// Each agent's payment addresses in chain order, with the position each took effect.
type Histories = BTreeMap<String, Vec<((i64, i64), String)>>;

packed_row! {
    /// A `payment_bindings` row: from its position on, the agent receives at `address` (none
    /// when empty).
    struct PackedBinding {
        agent_key: String = payment_bindings::agent_key,
        address: String = payment_bindings::address,
    }
}

packed_row! {
    /// An `outflows` row as reputation reads it.
    struct PackedOutflow {
        from_address: String = outflows::from_address,
        to_address: String = outflows::to_address,
        timestamp: i64 = outflows::timestamp,
    }
}

/// Adds to `loaded` the outflows of `subjects` on `chain_id` up to and including block `up_to`.
pub(super) async fn outflows(
    conn: &mut AnyConnection,
    chain_id: u64,
    subjects: &[Subject],
    up_to: u64,
    loaded: &mut BTreeMap<String, Loaded>,
) -> StoreResult<()> {
    let histories = histories(conn, chain_id, subjects, up_to).await?;
    let mut agents_at: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (key, history) in &histories {
        for (_, address) in history.iter().filter(|(_, a)| !a.is_empty()) {
            agents_at.entry(address).or_default().insert(key);
        }
    }
    let addresses: Vec<&str> = agents_at.keys().copied().collect();
    for chunk in addresses.chunks(ADDRESSES_PER_QUERY) {
        let within = Within {
            table: outflows::NAME,
            chain_id,
            up_to,
            column: "from_address",
        };
        let rows: Vec<(i64, i64, PackedOutflow)> = within
            .rows(conn, chunk, "reading outflows of agents' addresses")
            .await?;
        for (block, log, row) in rows {
            let from = row.from_address.as_str();
            for key in agents_at.get(from).into_iter().flatten() {
                if crediting::bound_at(&histories[*key], from, &(block, log)) {
                    seen(loaded, key, block)?.facts.outflows.push(Outflow {
                        to: decode::parse(outflows::NAME, "to_address", &row.to_address)?,
                        timestamp: decode::uint(outflows::NAME, "timestamp", row.timestamp)?,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The payment addresses of `subjects` taken up to block `up_to`, each agent's in chain order.
async fn histories(
    conn: &mut AnyConnection,
    chain_id: u64,
    subjects: &[Subject],
    up_to: u64,
) -> StoreResult<Histories> {
    let within = Within {
        table: payment_bindings::NAME,
        chain_id,
        up_to,
        column: "agent_key",
    };
    let keys: Vec<&str> = subjects.iter().map(|s| s.key.as_str()).collect();
    let rows: Vec<(i64, i64, PackedBinding)> = within
        .rows(conn, &keys, "reading agents' payment addresses")
        .await?;
    let mut histories = Histories::new();
    for (block, log, row) in rows {
        histories
            .entry(row.agent_key)
            .or_default()
            .push(((block, log), row.address));
    }
    Ok(histories)
}

/// Rows of a chain's fact table up to a block whose `column` is one of some values.
struct Within {
    table: &'static str,
    chain_id: u64,
    up_to: u64,
    column: &'static str,
}

impl Within {
    /// The rows whose column is one of `values`, as `T`, in chain order; `context` names the
    /// read in errors.
    async fn rows<T: PackedRow>(
        &self,
        conn: &mut AnyConnection,
        values: &[&str],
        context: &'static str,
    ) -> StoreResult<Vec<(i64, i64, T)>> {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {} FROM {} WHERE chain_id = ",
            packed_rows::<T>(Dialect::of(conn)),
            self.table
        ));
        query.push_bind(int("chain_id", self.chain_id)?);
        query.push(" AND block_number <= ");
        query.push_bind(sql_bound(self.up_to));
        query.push(format!(" AND {}", self.column));
        push_in(&mut query, values.iter().copied());
        fetch_packed_in_chain_order(conn, query, context).await
    }
}
