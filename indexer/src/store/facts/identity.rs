//! Facts of the ERC-8004 Identity Registry: registrations, transfers, approvals, URIs, metadata.

use super::payments::bind_payments;
use super::{Touched, i};
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::keys::erc8004_agent_key;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::{Address, U256};
use sqlx::SqliteConnection;

pub(super) async fn apply(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
    touched: &mut Touched,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (i(ev.block_number), i(ev.log_index));
    let emitter = hex_address(&ev.address);
    match decoded {
        Decoded::Registered {
            token_id,
            uri,
            owner,
        } => {
            sqlx::query(
                "INSERT INTO identity_registrations (chain_id, registry, token_id, owner, uri, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(hex_address(owner))
            .bind(uri)
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting a registration")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::IdentityTransfer { from, to, token_id } => {
            sqlx::query(
                "INSERT INTO identity_transfers (chain_id, registry, token_id, from_address, to_address, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(hex_address(from))
            .bind(hex_address(to))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting an identity transfer")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::Approval {
            owner,
            approved,
            token_id,
        } => {
            approval(
                conn,
                chain_id,
                &emitter,
                owner,
                approved,
                Some(token_id),
                *approved != Address::ZERO,
                ev,
            )
            .await?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::ApprovalForAll {
            owner,
            operator,
            approved,
        } => {
            approval(
                conn, chain_id, &emitter, owner, operator, None, *approved, ev,
            )
            .await?;
            touched.owners.insert((ev.address, *owner));
        }
        Decoded::UriUpdated {
            token_id,
            uri,
            updated_by,
        } => {
            sqlx::query(
                "INSERT INTO identity_uri_updates (chain_id, registry, token_id, uri, updated_by, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(uri)
            .bind(hex_address(updated_by))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a URI update")?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::MetadataSet {
            token_id,
            key,
            value,
        } => {
            sqlx::query(
                "INSERT INTO identity_metadata (chain_id, registry, token_id, key, value, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&emitter)
            .bind(token_id.to_string())
            .bind(key)
            .bind(value.as_ref())
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting metadata")?;
            if key == "agentWallet" {
                let agent_key = erc8004_agent_key(chain_id, &ev.address, token_id);
                let wallet = crate::store::wallet_from_metadata(value)
                    .map(|w| hex_address(&w))
                    .unwrap_or_default();
                bind_payments(conn, chain_id, &agent_key, &wallet, ev).await?;
            }
            touched.erc8004.insert((ev.address, *token_id));
        }
        _ => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn approval(
    conn: &mut SqliteConnection,
    chain_id: u64,
    registry: &str,
    owner: &Address,
    operator: &Address,
    token_id: Option<&U256>,
    approved: bool,
    ev: &EventRecord,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO identity_approvals (chain_id, registry, owner, operator, token_id, approved, block_number, log_index)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i(chain_id))
    .bind(registry)
    .bind(hex_address(owner))
    .bind(hex_address(operator))
    .bind(token_id.map(U256::to_string))
    .bind(approved)
    .bind(i(ev.block_number))
    .bind(i(ev.log_index))
    .execute(&mut *conn)
    .await
    .context("inserting an approval")?;
    Ok(())
}
