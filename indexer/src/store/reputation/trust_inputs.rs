//! What the trust ranks say about the agents being scored ([`TrustInputs`]): each agent under the
//! rank in force for it at a block (`reputation::rollout`), read from the stored ranks or taken
//! from one computed for a feed at a past block.

use super::clusters;
use super::in_force;
use super::load::Loaded;
use super::trust;
use crate::reputation::{AgentTrust, TrustInputs, TrustParams, TrustRank};
use crate::schema::{trust_agents, trust_payers};
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::{self, int};
use crate::store::in_list::push_in;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Addresses per IN list.
const ADDRESSES_PER_QUERY: usize = 5_000;

/// Where the rank of one epoch comes from.
pub(super) enum Rank {
    /// The chain's stored rank of that epoch, and whether any seed held trust in it.
    Stored { seeded: bool },
    /// A rank computed for the occasion (a feed at a block whose rank is no longer stored).
    Computed(TrustRank),
}

/// Fills in, for each loaded agent, what the stored rank in force for it says, at the block the
/// chain's stored rows were last brought to (nothing before the chain's first settle).
pub(super) async fn stored_inputs(
    conn: &mut AnyConnection,
    chain_id: u64,
    loaded: &mut BTreeMap<String, Loaded>,
    params: &TrustParams,
) -> StoreResult<()> {
    let Some(applied) = in_force::applied_block(conn, chain_id).await? else {
        return Ok(());
    };
    let ranks = trust::stored_epochs(conn, chain_id)
        .await?
        .into_iter()
        .map(|(epoch, seeded)| (epoch, Rank::Stored { seeded }))
        .collect();
    inputs_at(conn, chain_id, applied, &ranks, loaded, params).await
}

/// Fills in, for each loaded agent, what the rank in force for it at `block` says, from
/// `ranks` by epoch. An agent whose epoch `ranks` lacks, or whose rank had no seed, is left
/// without trust inputs.
pub(super) async fn inputs_at(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: u64,
    ranks: &BTreeMap<u64, Rank>,
    loaded: &mut BTreeMap<String, Loaded>,
    params: &TrustParams,
) -> StoreResult<()> {
    for (epoch, rank) in ranks {
        let keys: BTreeSet<String> = loaded
            .keys()
            .filter(|key| params.epoch_in_force_for(key, block) == *epoch)
            .cloned()
            .collect();
        if keys.is_empty() {
            continue;
        }
        match rank {
            Rank::Stored { seeded: false } => {}
            Rank::Stored { seeded: true } => {
                stored(conn, chain_id, *epoch, &keys, loaded, params.unproven_cap).await?
            }
            Rank::Computed(rank) => computed(rank, *epoch, &keys, loaded, params.unproven_cap),
        }
    }
    Ok(())
}

/// Fills in what the stored rank of `epoch` says about the loaded agents `keys`.
async fn stored(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    keys: &BTreeSet<String>,
    loaded: &mut BTreeMap<String, Loaded>,
    unproven_cap: f64,
) -> StoreResult<()> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT agent_key, relative, top_payers FROM {trust_agents_table} WHERE epoch_block = ",
        trust_agents_table = trust_agents::NAME,
    ));
    query.push_bind(int("epoch", epoch)?);
    query.push(" AND agent_key");
    push_in(&mut query, keys);
    let rows: Vec<(String, f64, String)> = Dialect::of(conn)
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await
        .context("reading agents' trust")?;
    let mut agents: BTreeMap<String, AgentTrust> = BTreeMap::new();
    for (key, relative, top) in rows {
        let top_payers = decode::json(trust_agents::NAME, "top_payers", &top)?;
        agents.insert(
            key,
            AgentTrust {
                relative,
                top_payers,
            },
        );
    }
    let payers: BTreeSet<Address> = keys
        .iter()
        .filter_map(|key| loaded.get(key))
        .flat_map(|l| l.facts.payments.iter().map(|p| p.payer))
        .collect();
    let standing = standing_of(conn, chain_id, epoch, &payers).await?;
    let clusters = clusters::of_payers(conn, chain_id, epoch, &payers).await?;
    for key in keys {
        let Some(entry) = loaded.get_mut(key) else {
            continue;
        };
        let of: BTreeMap<Address, f64> = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| standing.get(&p.payer).map(|s| (p.payer, *s)))
            .collect();
        let clusters = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| clusters.get(&p.payer).map(|m| (p.payer, m.clone())))
            .collect();
        entry.facts.trust = Some(TrustInputs {
            epoch_block: epoch,
            agent: agents.remove(key),
            standing: of,
            unproven_cap,
            clusters,
        });
    }
    Ok(())
}

/// The standing of `payers` in the stored rank of `epoch` (those with none are left out).
async fn standing_of(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    payers: &BTreeSet<Address>,
) -> StoreResult<BTreeMap<Address, f64>> {
    let mut out = BTreeMap::new();
    let payers: Vec<String> = payers.iter().map(hex_address).collect();
    for chunk in payers.chunks(ADDRESSES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT address, standing FROM {trust_payers_table} WHERE chain_id = ",
            trust_payers_table = trust_payers::NAME,
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND epoch_block = ");
        query.push_bind(int("epoch", epoch)?);
        query.push(" AND address");
        push_in(&mut query, chunk);
        let rows: Vec<(String, f64)> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading payers' standing")?;
        for (address, standing) in rows {
            out.insert(
                decode::parse(trust_payers::NAME, "address", &address)?,
                standing,
            );
        }
    }
    Ok(out)
}

/// Fills in what `rank` (computed as of `epoch`) says about the loaded agents `keys`.
fn computed(
    rank: &TrustRank,
    epoch: u64,
    keys: &BTreeSet<String>,
    loaded: &mut BTreeMap<String, Loaded>,
    unproven_cap: f64,
) {
    if !rank.seeded {
        return;
    }
    for key in keys {
        let Some(entry) = loaded.get_mut(key) else {
            continue;
        };
        let standing = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| {
                rank.standing
                    .get(&p.payer)
                    .filter(|s| **s > 0.0)
                    .map(|s| (p.payer, *s))
            })
            .collect();
        let clusters = entry
            .facts
            .payments
            .iter()
            .filter_map(|p| rank.clusters.membership(&p.payer).map(|m| (p.payer, m)))
            .collect();
        entry.facts.trust = Some(TrustInputs {
            epoch_block: epoch,
            agent: rank.agents.get(key).cloned(),
            standing,
            unproven_cap,
            clusters,
        });
    }
}
