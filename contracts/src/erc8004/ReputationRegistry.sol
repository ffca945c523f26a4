// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IdentityRegistry} from "./IdentityRegistry.sol";

/// @title ReputationRegistry
/// @notice ERC-8004 v2.0.0 Reputation Registry: signed fixed-point feedback per (agent, client) with
///         1-based indexes, revocation by the client, and responses appended by anyone.
contract ReputationRegistry {
    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    uint8 public constant MAX_DECIMALS = 18;
    int256 public constant MAX_ABS_VALUE = 1e38;

    IdentityRegistry private immutable _identity;

    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => Feedback))) private _feedback;
    mapping(uint256 agentId => mapping(address client => uint64)) private _lastIndex;
    mapping(uint256 agentId => address[]) private _clients;
    mapping(uint256 agentId => mapping(address client => bool)) private _isClient;
    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => mapping(address responder => uint64))))
        private _responseCount;

    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    error TooManyDecimals(uint8 valueDecimals);
    error ValueOutOfRange(int128 value);
    error SelfFeedback(uint256 agentId, address caller);
    error NoSuchFeedback(uint256 agentId, address client, uint64 feedbackIndex);
    error AlreadyRevoked(uint256 agentId, address client, uint64 feedbackIndex);
    error EmptyResponseURI();
    error NoClients();

    constructor(IdentityRegistry identityRegistry) {
        _identity = identityRegistry;
    }

    function getIdentityRegistry() external view returns (address) {
        return address(_identity);
    }

    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        if (valueDecimals > MAX_DECIMALS) revert TooManyDecimals(valueDecimals);
        if (value > MAX_ABS_VALUE || value < -MAX_ABS_VALUE) revert ValueOutOfRange(value);
        // ownerOf inside reverts for an agent that does not exist.
        if (_identity.isAuthorizedOrOwner(msg.sender, agentId)) revert SelfFeedback(agentId, msg.sender);

        uint64 index = ++_lastIndex[agentId][msg.sender];
        _feedback[agentId][msg.sender][index] =
            Feedback({value: value, valueDecimals: valueDecimals, isRevoked: false, tag1: tag1, tag2: tag2});
        if (!_isClient[agentId][msg.sender]) {
            _isClient[agentId][msg.sender] = true;
            _clients[agentId].push(msg.sender);
        }
        emit NewFeedback(
            agentId, msg.sender, index, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash
        );
    }

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage f = _existing(agentId, msg.sender, feedbackIndex);
        if (f.isRevoked) revert AlreadyRevoked(agentId, msg.sender, feedbackIndex);
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        if (bytes(responseURI).length == 0) revert EmptyResponseURI();
        _existing(agentId, clientAddress, feedbackIndex);
        _responseCount[agentId][clientAddress][feedbackIndex][msg.sender]++;
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    // ---------------------------------------------------------------- views

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage f = _existing(agentId, clientAddress, feedbackIndex);
        return (f.value, f.valueDecimals, f.tag1, f.tag2, f.isRevoked);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return _lastIndex[agentId][clientAddress];
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    function getResponseCount(uint256 agentId, address clientAddress, uint64 feedbackIndex, address responder)
        external
        view
        returns (uint64)
    {
        return _responseCount[agentId][clientAddress][feedbackIndex][responder];
    }

    /// @notice Average of the matching, unrevoked feedback of `clientAddresses`. Values are scaled
    ///         to 18 decimals before averaging; the result is expressed in the most frequent
    ///         `valueDecimals` among them (ties go to the smaller).
    /// @param tag1 Empty means any tag1.
    /// @param tag2 Empty means any tag2.
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        if (clientAddresses.length == 0) revert NoClients();
        bytes32 tag1Hash = keccak256(bytes(tag1));
        bytes32 tag2Hash = keccak256(bytes(tag2));
        int256 sum;
        uint256[19] memory decimalsSeen;
        for (uint256 i; i < clientAddresses.length; ++i) {
            address client = clientAddresses[i];
            uint64 last = _lastIndex[agentId][client];
            for (uint64 j = 1; j <= last; ++j) {
                Feedback storage f = _feedback[agentId][client][j];
                if (f.isRevoked) continue;
                if (bytes(tag1).length != 0 && keccak256(bytes(f.tag1)) != tag1Hash) continue;
                if (bytes(tag2).length != 0 && keccak256(bytes(f.tag2)) != tag2Hash) continue;
                sum += int256(f.value) * int256(uint256(10) ** (MAX_DECIMALS - f.valueDecimals));
                decimalsSeen[f.valueDecimals]++;
                count++;
            }
        }
        if (count == 0) return (0, 0, 0);
        for (uint8 d = 1; d <= MAX_DECIMALS; ++d) {
            if (decimalsSeen[d] > decimalsSeen[summaryValueDecimals]) summaryValueDecimals = d;
        }
        int256 average = sum / int256(uint256(count));
        summaryValue = int128(average / int256(uint256(10) ** (MAX_DECIMALS - summaryValueDecimals)));
    }

    function getVersion() external pure returns (string memory) {
        return "2.0.0";
    }

    function _existing(uint256 agentId, address client, uint64 index) private view returns (Feedback storage) {
        if (index == 0 || index > _lastIndex[agentId][client]) revert NoSuchFeedback(agentId, client, index);
        return _feedback[agentId][client][index];
    }
}
