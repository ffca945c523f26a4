//! The activity stage: when each agent was last active on-chain (`agent_activity`), the block
//! of its newest fact (its own events, the metadata its owner set, feedback given to it and
//! revoked) and that block's time, as the agent0 subgraph reports `updatedAt`.
//!
//! Activity only moves forward as a chain grows, so a batch raises each agent's row to the
//! newest of what the batch brought (agents whose own last event is in the batch, metadata,
//! feedback and revocations in its blocks). A rewind recomputes, from the facts that remain,
//! every agent whose activity was above the ancestor: those are exactly the agents the undone
//! facts could change.

use super::{BatchContext, RewindContext};
use crate::schema::{
    agent_activity, agents, events, feedback, feedback_revocations, identity_metadata,
};
use crate::store::decode::int;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::{AnyConnection, Row};
use std::collections::BTreeMap;

/// The tables the stage owns.
pub(super) const TABLES: &[&str] = &[agent_activity::NAME];

/// Agents recomputed per statement on a rewind.
const KEYS_PER_STATEMENT: usize = 500;

/// The facts of the ERC-8004 token of agents row `a` in table alias `t`.
fn of_token(t: &str) -> String {
    format!("{t}.chain_id = a.chain_id AND {t}.registry = a.registry AND {t}.token_id = a.token_id")
}

/// The event row of fact alias `t`.
fn event_of(t: &str) -> String {
    format!(
        "e.chain_id = {t}.chain_id AND e.block_number = {t}.block_number AND e.log_index = {t}.log_index"
    )
}

/// The time of fact alias `t`'s event, looked up by its key for each fact. (A join would let
/// PostgreSQL, which keeps no statistics of `events`, hash every event of the chain to meet a
/// batch's few metadata rows: 60 ms of a 95 ms statement late in a backfill.) Every fact's
/// event is stored with it, in the same batch.
fn event_time(t: &str) -> String {
    format!(
        "(SELECT e.block_timestamp FROM {events} e WHERE {})",
        event_of(t),
        events = events::NAME,
    )
}

/// The time of agents row `a`'s own last event (its registration's when that block holds no
/// stored event).
fn own_event_time() -> String {
    format!(
        "coalesce((SELECT e.block_timestamp FROM {events} e \
         WHERE e.chain_id = a.chain_id AND e.block_number = a.last_event_block LIMIT 1), a.registered_at)",
        events = events::NAME,
    )
}

/// Raises the activity of every agent the batch's blocks hold a newer fact of (then on
/// PostgreSQL analyzes `agent_activity` when it has grown enough).
pub(super) async fn apply(
    conn: &mut AnyConnection,
    batch: &mut BatchContext<'_>,
) -> StoreResult<()> {
    let dialect = batch.dialect;
    let chain = int("chain_id", batch.prepared.batch.chain.chain_id)?;
    let from = int("from_block", batch.prepared.batch.from_block)?;
    let newer = |column: &str| {
        dialect.greatest(
            &format!("{}.{column}", agent_activity::NAME),
            &format!("excluded.{column}"),
        )
    };
    let sql = format!(
        "INSERT INTO {activity} (agent_key, chain_id, last_block, updated_at) \
         SELECT agent_key, $1, max(block), max(at) FROM ( \
           SELECT a.agent_key AS agent_key, a.last_event_block AS block, {own} AS at \
             FROM {agents} a WHERE a.chain_id = $1 AND a.last_event_block >= $2 \
           UNION ALL \
           SELECT a.agent_key, m.block_number, {time_m} FROM {metadata} m \
             {in_order} {agents} a ON {token_m} \
            WHERE m.chain_id = $1 AND m.block_number >= $2 \
           UNION ALL \
           SELECT a.agent_key, f.block_number, f.timestamp FROM {feedback} f \
             JOIN {agents} a ON {token_f} WHERE f.chain_id = $1 AND f.block_number >= $2 \
           UNION ALL \
           SELECT a.agent_key, r.block_number, {time_r} FROM {revocations} r \
             {in_order} {agents} a ON {token_r} \
            WHERE r.chain_id = $1 AND r.block_number >= $2 \
         ) AS touched WHERE true GROUP BY agent_key \
         ON CONFLICT (agent_key) DO UPDATE SET last_block = {last_block}, updated_at = {updated_at}",
        activity = agent_activity::NAME,
        agents = agents::NAME,
        metadata = identity_metadata::NAME,
        feedback = feedback::NAME,
        revocations = feedback_revocations::NAME,
        own = own_event_time(),
        // The batch's metadata and revocations are few: read them first (by block) and look
        // their agents up by token.
        in_order = dialect.join_in_order(),
        time_m = event_time("m"),
        time_r = event_time("r"),
        token_m = of_token("m"),
        token_f = of_token("f"),
        token_r = of_token("r"),
        last_block = newer("last_block"),
        updated_at = newer("updated_at"),
    );
    let raised = sqlx::query(&sql)
        .bind(chain)
        .bind(from)
        .execute(&mut *conn)
        .await
        .context("raising the activity of the agents a batch touched")?
        .rows_affected();
    if dialect == Dialect::Postgres {
        let written = BTreeMap::from([(agent_activity::NAME, raised)]);
        batch.statistics.after_writing(conn, &written).await?;
    }
    Ok(())
}

/// Recomputes, from the facts that remain, every agent whose activity was above the ancestor
/// (the agents stage has already recomputed or removed them).
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    rewind: &mut RewindContext<'_>,
) -> StoreResult<()> {
    let above = format!(
        "FROM {} WHERE chain_id = $1 AND last_block > $2",
        agent_activity::NAME
    );
    let keys: Vec<String> = sqlx::query(&format!("SELECT agent_key {above}"))
        .bind(rewind.chain_key)
        .bind(rewind.above)
        .fetch_all(&mut *conn)
        .await
        .context("reading the activity above a reorg")?
        .iter()
        .map(|row| row.try_get("agent_key"))
        .collect::<Result<_, _>>()
        .context("reading the activity above a reorg")?;
    sqlx::query(&format!("DELETE {above}"))
        .bind(rewind.chain_key)
        .bind(rewind.above)
        .execute(&mut *conn)
        .await
        .context("deleting the activity above a reorg")?;
    let dialect = Dialect::of(conn);
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let places: Vec<String> = (1..=chunk.len()).map(|n| format!("${n}")).collect();
        let sql = recompute(dialect, &places.join(", "));
        let mut query = sqlx::query(&sql).persistent(false);
        for key in chunk {
            query = query.bind(key);
        }
        query
            .execute(&mut *conn)
            .await
            .context("recomputing the activity of agents a reorg touched")?;
    }
    Ok(())
}

/// The statement computing the activity of the agents whose keys are bound at `places`, from
/// every fact they have.
fn recompute(dialect: Dialect, places: &str) -> String {
    let newest_block = |table: &str, alias: &str| {
        format!(
            "coalesce((SELECT max({alias}.block_number) FROM {table} {alias} WHERE {}), 0)",
            of_token(alias)
        )
    };
    let newest_event_time = |table: &str, alias: &str| {
        format!(
            "coalesce((SELECT max(e.block_timestamp) FROM {table} {alias} JOIN {events} e ON {} WHERE {}), 0)",
            event_of(alias),
            of_token(alias),
            events = events::NAME,
        )
    };
    let last_block = dialect.greatest_of(&[
        "a.last_event_block",
        &newest_block(identity_metadata::NAME, "m"),
        &newest_block(feedback::NAME, "f"),
        &newest_block(feedback_revocations::NAME, "r"),
    ]);
    let updated_at = dialect.greatest_of(&[
        &own_event_time(),
        &newest_event_time(identity_metadata::NAME, "m"),
        &format!(
            "coalesce((SELECT max(f.timestamp) FROM {} f WHERE {}), 0)",
            feedback::NAME,
            of_token("f")
        ),
        &newest_event_time(feedback_revocations::NAME, "r"),
    ]);
    format!(
        "INSERT INTO {activity} (agent_key, chain_id, last_block, updated_at) \
         SELECT a.agent_key, a.chain_id, {last_block}, {updated_at} FROM {agents} a \
         WHERE a.agent_key IN ({places})",
        activity = agent_activity::NAME,
        agents = agents::NAME,
    )
}
