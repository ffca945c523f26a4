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
            rows.push(
identity_registrations::NAME,
"chain_id, registry, token_id, owner, uri, block_number, log_index, tx_hash, timestamp",
vec![int("chain_id", chain_id)?.into(), (&emitter).into(), token_id.to_string().into(), hex_address(owner).into(), uri.into(), block.into(), log.into(), hex_b256(&ev.tx_hash).into(), int("block_timestamp", ev.block_timestamp)?.into()],
);
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::IdentityTransfer { from, to, token_id } => {
            rows.push(
                identity_transfers::NAME,
                "chain_id, registry, token_id, from_address, to_address, block_number, log_index",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&emitter).into(),
                    token_id.to_string().into(),
                    hex_address(from).into(),
                    hex_address(to).into(),
                    block.into(),
                    log.into(),
                ],
            );
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
            rows.push(
                identity_uri_updates::NAME,
                "chain_id, registry, token_id, uri, updated_by, block_number, log_index",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&emitter).into(),
                    token_id.to_string().into(),
                    uri.into(),
                    hex_address(updated_by).into(),
                    block.into(),
                    log.into(),
                ],
            );
            touched.erc8004.insert((ev.address, *token_id));
        }
        Decoded::MetadataSet {
            token_id,
            key,
            value,
        } => {
            rows.push(
                identity_metadata::NAME,
                "chain_id, registry, token_id, key, value, block_number, log_index",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&emitter).into(),
                    token_id.to_string().into(),
                    key.into(),
                    value.as_ref().into(),
                    block.into(),
                    log.into(),
                ],
            );
            if key == "agentWallet" {
                let agent_key = AgentKey::erc8004(chain_id, ev.address, *token_id).to_string();
                let wallet = crate::store::wallet_from_metadata(value)
                    .map(|w| hex_address(&w))
                    .unwrap_or_default();
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
    rows.push(
        identity_approvals::NAME,
        "chain_id, registry, owner, operator, token_id, approved, block_number, log_index",
        vec![
            int("chain_id", chain_id)?.into(),
            registry.into(),
            hex_address(owner).into(),
            hex_address(operator).into(),
            token_id.map(U256::to_string).into(),
            approved.into(),
            int("block_number", ev.block_number)?.into(),
            int("log_index", ev.log_index)?.into(),
        ],
    );
    Ok(())
}
