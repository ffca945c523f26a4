//! Agent registry logs: enrolment, curator decisions, updates and deregistration.

use super::{DecodeError, Decoded, RegistryAction, event};
use agentindex_contracts::AgentRegistry as R;
use alloy::primitives::B256;
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == R::AgentRegistered::SIGNATURE_HASH => {
            event::<R::AgentRegistered>(log).map(|e| Decoded::Registry {
                agent: e.agent,
                actor: e.owner,
                action: RegistryAction::Registered {
                    metadata_uri: e.metadataURI,
                    pending: e.pending,
                },
            })
        }
        t if t == R::AgentApproved::SIGNATURE_HASH => {
            event::<R::AgentApproved>(log).map(|e| Decoded::Registry {
                agent: e.agent,
                actor: e.curator,
                action: RegistryAction::Approved,
            })
        }
        t if t == R::AgentRemoved::SIGNATURE_HASH => {
            event::<R::AgentRemoved>(log).map(|e| Decoded::Registry {
                agent: e.agent,
                actor: e.curator,
                action: RegistryAction::Removed { reason: e.reason },
            })
        }
        t if t == R::AgentUpdated::SIGNATURE_HASH => event::<R::AgentUpdated>(log).map(|e| {
            // Only the owner can update, but the event does not name them.
            Decoded::Registry {
                agent: e.agent,
                actor: alloy::primitives::Address::ZERO,
                action: RegistryAction::Updated {
                    metadata_uri: e.metadataURI,
                },
            }
        }),
        t if t == R::AgentDeregistered::SIGNATURE_HASH => {
            event::<R::AgentDeregistered>(log).map(|e| Decoded::Registry {
                agent: e.agent,
                actor: e.owner,
                action: RegistryAction::Deregistered,
            })
        }
        t if t == R::CuratorAdded::SIGNATURE_HASH => Ok(Decoded::Ignored("CuratorAdded")),
        t if t == R::CuratorRemoved::SIGNATURE_HASH => Ok(Decoded::Ignored("CuratorRemoved")),
        _ => return None,
    };
    Some(decoded)
}
