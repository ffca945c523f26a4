//! ERC-8004 Identity Registry logs, current and legacy, plus its ERC-721 and ERC-4906 events.

use super::{DecodeError, Decoded, event, legacy};
use agentindex_contracts::IdentityRegistry as I;
use alloy::primitives::{B256, Bytes};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == I::Registered::SIGNATURE_HASH => {
            event::<I::Registered>(log).map(|e| Decoded::Registered {
                token_id: e.agentId,
                uri: e.agentURI,
                owner: e.owner,
            })
        }
        t if t == I::MetadataSet::SIGNATURE_HASH => {
            event::<I::MetadataSet>(log).map(|e| Decoded::MetadataSet {
                token_id: e.agentId,
                key: e.metadataKey,
                value: e.metadataValue,
            })
        }
        t if t == legacy::StringMetadata::MetadataSet::SIGNATURE_HASH => {
            event::<legacy::StringMetadata::MetadataSet>(log).map(|e| Decoded::MetadataSet {
                token_id: e.agentId,
                key: e.key,
                value: Bytes::from(e.value.into_bytes()),
            })
        }
        t if t == I::URIUpdated::SIGNATURE_HASH => {
            event::<I::URIUpdated>(log).map(|e| Decoded::UriUpdated {
                token_id: e.agentId,
                uri: e.newURI,
                updated_by: e.updatedBy,
            })
        }
        t if t == legacy::UriUpdatedSpelling::UriUpdated::SIGNATURE_HASH => {
            event::<legacy::UriUpdatedSpelling::UriUpdated>(log).map(|e| Decoded::UriUpdated {
                token_id: e.agentId,
                uri: e.newUri,
                updated_by: e.updatedBy,
            })
        }
        t if t == I::Transfer::SIGNATURE_HASH => {
            event::<I::Transfer>(log).map(|e| Decoded::IdentityTransfer {
                from: e.from,
                to: e.to,
                token_id: e.tokenId,
            })
        }
        t if t == I::Approval::SIGNATURE_HASH => {
            event::<I::Approval>(log).map(|e| Decoded::Approval {
                owner: e.owner,
                approved: e.approved,
                token_id: e.tokenId,
            })
        }
        t if t == I::ApprovalForAll::SIGNATURE_HASH => {
            event::<I::ApprovalForAll>(log).map(|e| Decoded::ApprovalForAll {
                owner: e.owner,
                operator: e.operator,
                approved: e.approved,
            })
        }
        t if t == I::MetadataUpdate::SIGNATURE_HASH => Ok(Decoded::Ignored("MetadataUpdate")),
        t if t == I::BatchMetadataUpdate::SIGNATURE_HASH => {
            Ok(Decoded::Ignored("BatchMetadataUpdate"))
        }
        t => return legacy::proxy_event(t).map(|name| Ok(Decoded::Ignored(name))),
    };
    Some(decoded)
}
