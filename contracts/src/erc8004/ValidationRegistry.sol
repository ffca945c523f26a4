// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IdentityRegistry} from "./IdentityRegistry.sol";

/// @title ValidationRegistry
/// @notice ERC-8004 v2.0.0 Validation Registry: an agent's owner or operator asks a validator to
///         check work (one request per hash); the validator answers 0..100, as often as it likes.
contract ValidationRegistry {
    struct Validation {
        address validatorAddress;
        uint256 agentId;
        uint8 response;
        bytes32 responseHash;
        string tag;
        uint256 lastUpdate;
        bool hasResponse;
    }

    uint8 public constant MAX_RESPONSE = 100;

    IdentityRegistry private immutable _identity;

    mapping(bytes32 requestHash => Validation) private _validations;
    mapping(bytes32 requestHash => bool) private _requested;
    mapping(uint256 agentId => bytes32[]) private _agentValidations;
    mapping(address validator => bytes32[]) private _validatorRequests;

    event ValidationRequest(
        address indexed validatorAddress, uint256 indexed agentId, string requestURI, bytes32 indexed requestHash
    );
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseURI,
        bytes32 responseHash,
        string tag
    );

    error NotAuthorized(uint256 agentId, address caller);
    error ZeroValidator();
    error DuplicateRequest(bytes32 requestHash);
    error UnknownRequest(bytes32 requestHash);
    error NotValidator(bytes32 requestHash, address caller);
    error ResponseOutOfRange(uint8 response);

    constructor(IdentityRegistry identityRegistry) {
        _identity = identityRegistry;
    }

    function getIdentityRegistry() external view returns (address) {
        return address(_identity);
    }

    function validationRequest(address validatorAddress, uint256 agentId, string calldata requestURI, bytes32 requestHash)
        external
    {
        if (validatorAddress == address(0)) revert ZeroValidator();
        if (!_identity.isAuthorizedOrOwner(msg.sender, agentId)) revert NotAuthorized(agentId, msg.sender);
        if (_requested[requestHash]) revert DuplicateRequest(requestHash);
        _requested[requestHash] = true;
        Validation storage v = _validations[requestHash];
        v.validatorAddress = validatorAddress;
        v.agentId = agentId;
        v.lastUpdate = block.timestamp;
        _agentValidations[agentId].push(requestHash);
        _validatorRequests[validatorAddress].push(requestHash);
        emit ValidationRequest(validatorAddress, agentId, requestURI, requestHash);
    }

    function validationResponse(
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        string calldata tag
    ) external {
        if (!_requested[requestHash]) revert UnknownRequest(requestHash);
        Validation storage v = _validations[requestHash];
        if (msg.sender != v.validatorAddress) revert NotValidator(requestHash, msg.sender);
        if (response > MAX_RESPONSE) revert ResponseOutOfRange(response);
        v.response = response;
        v.responseHash = responseHash;
        v.tag = tag;
        v.lastUpdate = block.timestamp;
        v.hasResponse = true;
        emit ValidationResponse(v.validatorAddress, v.agentId, requestHash, response, responseURI, responseHash, tag);
    }

    // ---------------------------------------------------------------- views

    function getValidationStatus(bytes32 requestHash)
        external
        view
        returns (
            address validatorAddress,
            uint256 agentId,
            uint8 response,
            bytes32 responseHash,
            string memory tag,
            uint256 lastUpdate
        )
    {
        if (!_requested[requestHash]) revert UnknownRequest(requestHash);
        Validation storage v = _validations[requestHash];
        return (v.validatorAddress, v.agentId, v.response, v.responseHash, v.tag, v.lastUpdate);
    }

    /// @notice Count and average latest response of the agent's answered requests, optionally only
    ///         from `validatorAddresses` (empty: all) and with `tag` (empty: any).
    function getSummary(uint256 agentId, address[] calldata validatorAddresses, string calldata tag)
        external
        view
        returns (uint64 count, uint8 averageResponse)
    {
        bytes32[] storage hashes = _agentValidations[agentId];
        bytes32 tagHash = keccak256(bytes(tag));
        uint256 total;
        for (uint256 i; i < hashes.length; ++i) {
            Validation storage v = _validations[hashes[i]];
            if (!v.hasResponse) continue;
            if (bytes(tag).length != 0 && keccak256(bytes(v.tag)) != tagHash) continue;
            if (validatorAddresses.length != 0 && !_contains(validatorAddresses, v.validatorAddress)) continue;
            total += v.response;
            count++;
        }
        averageResponse = count == 0 ? 0 : uint8(total / count);
    }

    function getAgentValidations(uint256 agentId) external view returns (bytes32[] memory) {
        return _agentValidations[agentId];
    }

    function getValidatorRequests(address validatorAddress) external view returns (bytes32[] memory) {
        return _validatorRequests[validatorAddress];
    }

    function getVersion() external pure returns (string memory) {
        return "2.0.0";
    }

    function _contains(address[] calldata list, address item) private pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == item) return true;
        }
        return false;
    }
}
