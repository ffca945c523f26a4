//! The rows of a Cardano batch's transactions: each policy run read (the follower's place in
//! the policy's list), each mint or burn, and each escrow action, noting the Masumi agents and
//! escrows touched.

use super::Touched;
use crate::cardano::registry::ActionKind;
use crate::schema::{cardano_script_runs, masumi_escrow_actions, masumi_registry_actions};
use crate::store::StoreResult;
use crate::store::batch::CardanoTx;
use crate::store::decode::int;
use crate::store::rows::Rows;

/// Buffers the rows of `tx` on chain `chain_id`.
pub(super) fn apply(
    rows: &mut Rows,
    chain_id: u64,
    tx: &CardanoTx,
    touched: &mut Touched,
) -> StoreResult<()> {
    let chain = int("chain_id", chain_id)?;
    let block_number = int("block_number", tx.place.height)?;
    let tx_index = i64::from(tx.place.index);
    for (run, script) in tx.runs.iter().enumerate() {
        rows.insert(cardano_script_runs::Row {
            chain_id: chain,
            script: script.clone(),
            block_number,
            tx_index,
            run: run as i64,
            tx_hash: tx.place.hash.to_vec(),
        });
    }
    for action in &tx.actions {
        let (holder, metadata, metadata_error) = match &action.kind {
            ActionKind::Mint { holder, metadata } => match metadata {
                Ok(value) => (holder.clone(), Some(value.to_string()), None),
                Err(reason) => (holder.clone(), None, Some(reason.to_string())),
            },
            ActionKind::Burn => (None, None, None),
        };
        let agent_key = action.agent.to_string();
        rows.insert(masumi_registry_actions::Row {
            chain_id: chain,
            block_number,
            tx_index,
            position: i64::from(action.position),
            block_hash: tx.place.block_hash.to_vec(),
            block_timestamp: int("block_timestamp", tx.place.time)?,
            tx_hash: tx.place.hash.to_vec(),
            agent_key: agent_key.clone(),
            policy_id: action.policy_id.clone(),
            registry_version: i64::from(action.registry_version),
            asset_name: action.asset_name.clone(),
            action: action.kind.as_str().to_string(),
            holder,
            metadata,
            metadata_error,
        });
        touched.masumi.insert(agent_key);
    }
    for action in &tx.escrow {
        let agent_key = action.agent.map(|agent| agent.to_string());
        rows.insert(masumi_escrow_actions::Row {
            chain_id: chain,
            block_number,
            tx_index,
            position: i64::from(action.position),
            block_hash: tx.place.block_hash.to_vec(),
            block_timestamp: int("block_timestamp", tx.place.time)?,
            tx_hash: tx.place.hash.to_vec(),
            escrow_key: action.escrow_key.clone(),
            contract_version: i64::from(action.contract_version),
            agent_key,
            buyer: action.buyer.clone(),
            seller: action.seller.clone(),
            unit: action.unit.clone(),
            amount: action.amount.to_string(),
            event: action.event.to_string(),
            state: action.state.map(str::to_string),
            output_index: action.output_index.map(i64::from),
            error: action.error.clone(),
        });
        touched.escrows.insert(action.escrow_key.clone());
    }
    Ok(())
}
