//! Event shapes older ERC-8004 registries left on chain, and the proxy-administration events of
//! upgradeable deployments. Each shape sits in its own interface so its Rust type has a name
//! while its Solidity name (and so its topic0) stays the original.

#![allow(missing_docs, clippy::too_many_arguments)]

use alloy::sol;

sol! {
    /// Identity Registry before 2.0: metadata values were strings.
    interface StringMetadata {
        event MetadataSet(uint256 indexed agentId, string indexed indexedKey, string key, string value);
    }
    /// Identity Registry before 2.0: `UriUpdated` spelling.
    interface UriUpdatedSpelling {
        event UriUpdated(uint256 indexed agentId, string newUri, address indexed updatedBy);
    }
    /// Reputation Registry: `uint8 score` with an endpoint.
    interface ScoreWithEndpoint {
        event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint8 score,
            string indexed tag1, string tag2, string endpoint, string feedbackUri, bytes32 feedbackHash);
    }
    /// Reputation Registry: `uint8 score` without an endpoint.
    interface Score {
        event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint8 score,
            string indexed tag1, string tag2, string feedbackUri, bytes32 feedbackHash);
    }
    /// Reputation Registry: `uint8 score` with bytes32 tags.
    interface ScoreBytes32Tags {
        event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint8 score,
            bytes32 indexed tag1, bytes32 tag2, string fileuri, bytes32 filehash);
    }
    /// Reputation Registry: `int256 value`.
    interface Int256Value {
        event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex,
            int256 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2,
            string endpoint, string feedbackURI, bytes32 feedbackHash);
    }
    /// Reputation Registry: `uint256 value`.
    interface Uint256Value {
        event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex,
            uint256 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2,
            string endpoint, string feedbackURI, bytes32 feedbackHash);
    }
    /// Validation Registry: bytes32 tag.
    interface Bytes32Tag {
        event ValidationResponse(address indexed validatorAddress, uint256 indexed agentId,
            bytes32 indexed requestHash, uint8 response, string responseURI, bytes32 responseHash, bytes32 tag);
    }
    /// What UUPS proxies and their owners emit besides the registry's own events.
    interface ProxyAdmin {
        event Upgraded(address indexed implementation);
        event Initialized(uint64 version);
        event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    }
}

/// Names of the proxy-administration events when `topic0` is one of them.
pub(super) fn proxy_event(topic0: alloy::primitives::B256) -> Option<&'static str> {
    use alloy::sol_types::SolEvent;
    [
        (ProxyAdmin::Upgraded::SIGNATURE_HASH, "Upgraded"),
        (ProxyAdmin::Initialized::SIGNATURE_HASH, "Initialized"),
        (
            ProxyAdmin::OwnershipTransferred::SIGNATURE_HASH,
            "OwnershipTransferred",
        ),
    ]
    .into_iter()
    .find_map(|(hash, name)| (hash == topic0).then_some(name))
}
