//! Facts of the ERC-8004 Identity Registry: registrations, transfers, approvals, URIs, metadata.

use super::Touched;
use super::payments::bind_payments;
use crate::primitives::AgentKey;
use crate::schema::{
    identity_approvals, identity_metadata, identity_registrations, identity_transfers,
    identity_uri_updates,
};
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::StoreResult;
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::decode::int;
use crate::store::rows::Rows;
use alloy::primitives::{Address, U256};

pub(super) fn apply(
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
    touched: &mut Touched,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (
        int("block_number", ev.block_number)?,
        int("log_index", ev.log_index)?,
    );
    let emitter = hex_address(&ev.address);
    match decoded {
        Decoded::Registered {
            token_id,
            uri,
            owner,
        } => {
            rows.insert(identity_registrations::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: emitter,
                token_id: token_id.to_string(),
                owner: hex_address(owner),
                uri: uri.clone(),
                block_number: block,
                log_index: log,
                tx_hash: hex_b256(&ev.tx_hash),
                timestamp: int("block_timestamp", ev.block_timestamp)?,
            });
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::IdentityTransfer { from, to, token_id } => {
            rows.insert(identity_transfers::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: emitter,
                token_id: token_id.to_string(),
                from_address: hex_address(from),
                to_address: hex_address(to),
                block_number: block,
                log_index: log,
            });
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::Approval {
            owner,
            approved,
            token_id,
        } => {
            approval(
                rows,
                chain_id,
                &emitter,
                owner,
                approved,
                Some(token_id),
                *approved != Address::ZERO,
                ev,
            )?;
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::ApprovalForAll {
            owner,
            operator,
            approved,
        } => {
            approval(
                rows, chain_id, &emitter, owner, operator, None, *approved, ev,
            )?;
            touched.owners.insert((ev.address, *owner));
        }
        Decoded::UriUpdated {
            token_id,
            uri,
            updated_by,
        } => {
            rows.insert(identity_uri_updates::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: emitter,
                token_id: token_id.to_string(),
                uri: uri.clone(),
                updated_by: hex_address(updated_by),
                block_number: block,
                log_index: log,
            });
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::MetadataSet {
            token_id,
            key,
            value,
        } => {
            rows.insert(identity_metadata::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: emitter,
                token_id: token_id.to_string(),
                key: key.clone(),
                value: value.to_vec(),
                block_number: block,
                log_index: log,
            });
            if let Some(wallet) = crate::agents::metadata_payment_address(key, value) {
                let agent_key = AgentKey::erc8004(chain_id, ev.address, *token_id).to_string();
                let wallet = wallet.map(|w| hex_address(&w)).unwrap_or_default();
                bind_payments(rows, chain_id, &agent_key, &wallet, ev)?;
            }
            touched.erc8004.insert((ev.address, *token_id));
        }
        _ => {}
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn approval(
    rows: &mut Rows,
    chain_id: u64,
    registry: &str,
    owner: &Address,
    operator: &Address,
    token_id: Option<&U256>,
    approved: bool,
    ev: &EventRecord,
) -> StoreResult<()> {
    rows.insert(identity_approvals::Row {
        chain_id: int("chain_id", chain_id)?,
        registry: registry.to_string(),
        owner: hex_address(owner),
        operator: hex_address(operator),
        token_id: token_id.map(U256::to_string),
        approved: i64::from(approved),
        block_number: int("block_number", ev.block_number)?,
        log_index: int("log_index", ev.log_index)?,
    });
    Ok(())
}
