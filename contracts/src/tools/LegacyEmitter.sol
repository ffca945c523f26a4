// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title LegacyEmitter
/// @notice Emits the event shapes older ERC-8004 registries left on chain before their January 2026
///         upgrade, with exactly their signatures, so decoders are tested against real logs. It has
///         no rules: whatever the caller passes is emitted.
contract LegacyEmitter {
    // Identity Registry, pre-2.0
    event MetadataSet(uint256 indexed agentId, string indexed indexedKey, string key, string value);
    event UriUpdated(uint256 indexed agentId, string newUri, address indexed updatedBy);

    // Reputation Registry, five historical NewFeedback shapes
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint8 score,
        string indexed tag1,
        string tag2,
        string endpoint,
        string feedbackUri,
        bytes32 feedbackHash
    );
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint8 score,
        string indexed tag1,
        string tag2,
        string feedbackUri,
        bytes32 feedbackHash
    );
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint8 score,
        bytes32 indexed tag1,
        bytes32 tag2,
        string fileuri,
        bytes32 filehash
    );
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int256 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        uint256 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );

    // Validation Registry with a bytes32 tag
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseURI,
        bytes32 responseHash,
        bytes32 tag
    );

    function emitStringMetadataSet(uint256 agentId, string calldata key, string calldata value) external {
        emit MetadataSet(agentId, key, key, value);
    }

    function emitUriUpdated(uint256 agentId, string calldata newUri, address updatedBy) external {
        emit UriUpdated(agentId, newUri, updatedBy);
    }

    /// @notice NewFeedback(uint256,address,uint8,string,string,string,string,bytes32)
    function emitScoreFeedbackWithEndpoint(
        uint256 agentId,
        address client,
        uint8 score,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackUri,
        bytes32 feedbackHash
    ) external {
        emit NewFeedback(agentId, client, score, tag1, tag2, endpoint, feedbackUri, feedbackHash);
    }

    /// @notice NewFeedback(uint256,address,uint8,string,string,string,bytes32)
    function emitScoreFeedback(
        uint256 agentId,
        address client,
        uint8 score,
        string calldata tag1,
        string calldata tag2,
        string calldata feedbackUri,
        bytes32 feedbackHash
    ) external {
        emit NewFeedback(agentId, client, score, tag1, tag2, feedbackUri, feedbackHash);
    }

    /// @notice NewFeedback(uint256,address,uint8,bytes32,bytes32,string,bytes32)
    function emitBytes32TagFeedback(
        uint256 agentId,
        address client,
        uint8 score,
        bytes32 tag1,
        bytes32 tag2,
        string calldata fileUri,
        bytes32 fileHash
    ) external {
        emit NewFeedback(agentId, client, score, tag1, tag2, fileUri, fileHash);
    }

    /// @notice NewFeedback(uint256,address,uint64,int256,uint8,string,string,string,string,string,bytes32)
    function emitInt256Feedback(
        uint256 agentId,
        address client,
        uint64 feedbackIndex,
        int256 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        emit NewFeedback(agentId, client, feedbackIndex, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    /// @notice NewFeedback(uint256,address,uint64,uint256,uint8,string,string,string,string,string,bytes32)
    function emitUint256Feedback(
        uint256 agentId,
        address client,
        uint64 feedbackIndex,
        uint256 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        emit NewFeedback(agentId, client, feedbackIndex, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    /// @notice ValidationResponse(address,uint256,bytes32,uint8,string,bytes32,bytes32)
    function emitBytes32TagValidationResponse(
        address validator,
        uint256 agentId,
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        bytes32 tag
    ) external {
        emit ValidationResponse(validator, agentId, requestHash, response, responseURI, responseHash, tag);
    }
}
