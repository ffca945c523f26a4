//! The funding clusters of a chain's trust epoch (`crate::reputation::funding`): found from the
//! funding transfers the facts stage kept (`funding_edges`) and the payments counted by the
//! epoch, stored beside the rank (`trust_clusters`), and read back for the payers of the agents
//! being rescored.

use crate::primitives::sql_bound;
use crate::reputation::{
    ClusterMembership, FundingEdge, PayerCluster, PayerClusters, ReputationRules, payer_clusters,
    with_next_moves,
};
use crate::schema::{funding_edges, trust_clusters};
use crate::sources::hex_address;
use crate::store::Dialect;
use crate::store::decode::{self, int};
use crate::store::in_list::push_in;
use crate::store::sql::write_rows;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::Address;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 2_000;
/// Addresses per IN list.
const ADDRESSES_PER_QUERY: usize = 5_000;

/// The funding transfers kept for payments at or before `epoch`.
pub(super) async fn transfers_as_of(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
) -> StoreResult<Vec<FundingEdge>> {
    let rows: Vec<(i64, i64, String, String, String, String)> = sqlx::query_as(&format!(
        "SELECT block_number, log_index, token, funder, funded, amount FROM {funding_edges_table}
         WHERE chain_id = $1 AND paid_block <= $2",
        funding_edges_table = funding_edges::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(sql_bound(epoch))
    .fetch_all(&mut *conn)
    .await
    .context("reading funding transfers")?;
    let table = funding_edges::NAME;
    rows.iter()
        .map(|(block, log_index, token, funder, funded, amount)| {
            Ok(FundingEdge {
                funder: decode::parse(table, "funder", funder)?,
                funded: decode::parse(table, "funded", funded)?,
                block: decode::uint(table, "block_number", *block)?,
                log_index: decode::uint(table, "log_index", *log_index)?,
                next_block: 0,
                token: decode::parse(table, "token", token)?,
                amount: decode::parse(table, "amount", amount)?,
            })
        })
        .collect()
}

/// The funding clusters of `payers` from an epoch's funding `transfers`, each given the block
/// its recipient next moved money on (a payment, or a kept transfer it sent). `paid` holds the
/// blocks payers paid in; only those of accounts some transfer funded are read, so it may hold
/// no others.
pub(super) fn from_transfers(
    transfers: Vec<FundingEdge>,
    paid: &[(Address, u64)],
    payers: &BTreeSet<Address>,
    rules: &ReputationRules,
) -> PayerClusters {
    if transfers.is_empty() {
        return PayerClusters::default();
    }
    let edges = with_next_moves(transfers, paid);
    let is_dust = |token: &Address, amount| {
        rules
            .tokens
            .get(token)
            .is_none_or(|rule| amount < rule.dust)
    };
    payer_clusters(&edges, payers, is_dust, &rules.trust.funding)
}

/// Writes the chain's funding clusters as of `epoch` (`chain` and `epoch` bound values); none
/// of that epoch are stored yet (an epoch's rank is written whole, once).
pub(super) async fn write(
    conn: &mut AnyConnection,
    chain: i64,
    epoch: i64,
    clusters: &PayerClusters,
) -> StoreResult<()> {
    let clustered: Vec<(&Address, &Address)> = clusters.of.iter().collect();
    for chunk in clustered.chunks(ROWS_PER_INSERT) {
        let rows = chunk
            .iter()
            .map(|(payer, _)| {
                let cluster = &clusters.explained[*payer];
                Ok([
                    int("size", cluster.size)?,
                    int("block_number", cluster.block)?,
                ])
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let mut insert = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} ({}) ",
            trust_clusters::NAME,
            trust_clusters::TABLE.column_list()
        ));
        insert.push_values(
            chunk.iter().zip(rows),
            |mut row, ((payer, representative), n)| {
                row.push_bind(chain)
                    .push_bind(epoch)
                    .push_bind(hex_address(payer))
                    .push_bind(hex_address(representative))
                    .push_bind(hex_address(&clusters.explained[*payer].funder))
                    .push_bind(n[0])
                    .push_bind(n[1]);
            },
        );
        write_rows(
            conn,
            insert,
            chunk.len(),
            ROWS_PER_INSERT,
            "writing payers' funding clusters",
        )
        .await?;
    }
    Ok(())
}

/// The funding clusters stored as of `epoch` of those of `payers` in one.
pub(super) async fn of_payers(
    conn: &mut AnyConnection,
    chain_id: u64,
    epoch: u64,
    payers: &BTreeSet<Address>,
) -> StoreResult<BTreeMap<Address, ClusterMembership>> {
    let mut out = BTreeMap::new();
    let payers: Vec<String> = payers.iter().map(hex_address).collect();
    let table = trust_clusters::NAME;
    for chunk in payers.chunks(ADDRESSES_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT address, representative, funder, size, block_number FROM {table} WHERE chain_id = ",
        ));
        query.push_bind(int("chain_id", chain_id)?);
        query.push(" AND epoch_block = ");
        query.push_bind(int("epoch", epoch)?);
        query.push(" AND address");
        push_in(&mut query, chunk);
        let rows: Vec<(String, String, String, i64, i64)> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading payers' funding clusters")?;
        for (address, representative, funder, size, block) in rows {
            out.insert(
                decode::parse(table, "address", &address)?,
                ClusterMembership {
                    representative: decode::parse(table, "representative", &representative)?,
                    cluster: PayerCluster {
                        funder: decode::parse(table, "funder", &funder)?,
                        size: decode::uint(table, "size", size)?,
                        block: decode::uint(table, "block_number", block)?,
                    },
                },
            );
        }
    }
    Ok(out)
}
