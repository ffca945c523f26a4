//! Reading what an agent contract already said about itself when a registry enrolled it: its
//! events before the enrolment are not followed, so its owner, card, active flag and heartbeat
//! are read with `eth_call` at the enrolment block. A call the contract or node refuses for
//! good (a contract without that function, a node without that block's state) is recorded as
//! failed; a transient failure fails the range so it is fetched again.

use crate::rpc::{ChainRpc, RpcError};
use crate::sources::agent_card_fields;
use crate::store::AgentSnapshot;
use agentindex_contracts::AgentCard as A;
use alloy::primitives::{Address, B256};
use alloy::sol_types::SolCall;

/// The state of agent contract `agent` after block `block_hash`.
pub(super) async fn read(
    rpc: &ChainRpc,
    agent: Address,
    block_hash: B256,
) -> Result<AgentSnapshot, RpcError> {
    let mut errors = Vec::new();
    let at = (rpc, agent, block_hash);
    Ok(AgentSnapshot {
        owner: call(at, A::ownerCall {}, &mut errors).await?,
        card: call(at, A::cardCall {}, &mut errors)
            .await?
            .map(agent_card_fields),
        active: call(at, A::activeCall {}, &mut errors).await?,
        heartbeat_interval: call(at, A::heartbeatIntervalCall {}, &mut errors).await?,
        last_heartbeat: call(at, A::lastHeartbeatCall {}, &mut errors).await?,
        errors,
    })
}

/// One view call; `None` with a line in `errors` when it fails for good.
async fn call<C: SolCall>(
    (rpc, agent, block_hash): (&ChainRpc, Address, B256),
    request: C,
    errors: &mut Vec<String>,
) -> Result<Option<C::Return>, RpcError> {
    match rpc
        .call_at(agent, request.abi_encode().into(), block_hash)
        .await
    {
        Ok(output) => match C::abi_decode_returns(&output) {
            Ok(value) => Ok(Some(value)),
            Err(error) => {
                errors.push(format!("{}: undecodable answer: {error}", C::SIGNATURE));
                Ok(None)
            }
        },
        Err(error) if !error.kind.is_final() => Err(error),
        Err(error) => {
            errors.push(format!("{}: {}", C::SIGNATURE, error.kind));
            Ok(None)
        }
    }
}
