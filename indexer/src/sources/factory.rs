//! Agent factory logs: `AgentCreated(agent, owner, index)`.

use super::{DecodeError, Decoded, event};
use agentindex_contracts::AgentFactory::AgentCreated;
use alloy::primitives::B256;
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    (topic0 == AgentCreated::SIGNATURE_HASH).then(|| {
        event::<AgentCreated>(log).map(|e| Decoded::AgentCreated {
            agent: e.agent,
            owner: e.owner,
        })
    })
}
