//! ERC-8004 Validation Registry logs: requests and every response, in both tag shapes.

use super::model::ValidationShape;
use super::{DecodeError, Decoded, bytes32_text, event, legacy};
use agentindex_contracts::ValidationRegistry as V;
use alloy::primitives::B256;
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded =
        match topic0 {
            t if t == V::ValidationRequest::SIGNATURE_HASH => event::<V::ValidationRequest>(log)
                .map(|e| Decoded::ValidationRequest {
                    validator: e.validatorAddress,
                    token_id: e.agentId,
                    uri: e.requestURI,
                    request_hash: e.requestHash,
                }),
            t if t == V::ValidationResponse::SIGNATURE_HASH => event::<V::ValidationResponse>(log)
                .map(|e| Decoded::ValidationResponse {
                    validator: e.validatorAddress,
                    token_id: e.agentId,
                    request_hash: e.requestHash,
                    response: e.response,
                    uri: e.responseURI,
                    response_hash: e.responseHash,
                    tag: e.tag,
                    shape: ValidationShape::Current,
                }),
            t if t == legacy::Bytes32Tag::ValidationResponse::SIGNATURE_HASH => event::<
                legacy::Bytes32Tag::ValidationResponse,
            >(log)
            .map(|e| Decoded::ValidationResponse {
                validator: e.validatorAddress,
                token_id: e.agentId,
                request_hash: e.requestHash,
                response: e.response,
                uri: e.responseURI,
                response_hash: e.responseHash,
                tag: bytes32_text(&e.tag),
                shape: ValidationShape::Bytes32Tag,
            }),
            t => return legacy::proxy_event(t).map(|name| Ok(Decoded::Ignored(name))),
        };
    Some(decoded)
}
