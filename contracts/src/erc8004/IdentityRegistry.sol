// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721URIStorage} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721URIStorage.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @title IdentityRegistry
/// @notice ERC-8004 v2.0.0 Identity Registry: every agent is an ERC-721 token whose URI names its
///         registration file, with free-form metadata and a reserved `agentWallet` that the wallet
///         itself must approve with an EIP-712 signature (or ERC-1271 for contract wallets).
contract IdentityRegistry is ERC721URIStorage, EIP712 {
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    /// @notice The longest a wallet proof may stay valid, counted from the block it is used in.
    uint256 public constant MAX_DEADLINE_DELAY = 5 minutes;
    bytes32 public constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    string private constant AGENT_WALLET_KEY = "agentWallet";
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256(bytes(AGENT_WALLET_KEY));

    uint256 private _nextAgentId;
    mapping(uint256 agentId => mapping(string key => bytes value)) private _metadata;

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);

    error NotAuthorized(uint256 agentId, address caller);
    error ReservedMetadataKey(string key);
    error DeadlineExpired(uint256 deadline, uint256 nowTimestamp);
    error DeadlineTooFar(uint256 deadline, uint256 latestAllowed);
    error InvalidWalletSignature(uint256 agentId, address wallet);
    error ZeroWallet();

    constructor() ERC721("AgentIdentity", "AGENT") EIP712("ERC8004IdentityRegistry", "1") {}

    modifier onlyOwnerOrOperator(uint256 agentId) {
        if (!isAuthorizedOrOwner(msg.sender, agentId)) revert NotAuthorized(agentId, msg.sender);
        _;
    }

    // ---------------------------------------------------------------- registration

    function register() external returns (uint256 agentId) {
        return _register("", new MetadataEntry[](0));
    }

    function register(string calldata agentURI) external returns (uint256 agentId) {
        return _register(agentURI, new MetadataEntry[](0));
    }

    function register(string calldata agentURI, MetadataEntry[] calldata metadata) external returns (uint256 agentId) {
        return _register(agentURI, metadata);
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external onlyOwnerOrOperator(agentId) {
        _setTokenURI(agentId, newURI);
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    // ---------------------------------------------------------------- metadata

    function getMetadata(uint256 agentId, string calldata metadataKey) external view returns (bytes memory) {
        return _metadata[agentId][metadataKey];
    }

    function setMetadata(uint256 agentId, string calldata metadataKey, bytes calldata metadataValue)
        external
        onlyOwnerOrOperator(agentId)
    {
        _setMetadata(agentId, metadataKey, metadataValue);
    }

    // ---------------------------------------------------------------- agent wallet

    /// @notice Binds `newWallet` as the agent's payment wallet; `signature` is the wallet's EIP-712
    ///         consent to AgentWalletSet(agentId, newWallet, owner, deadline).
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature)
        external
        onlyOwnerOrOperator(agentId)
    {
        if (newWallet == address(0)) revert ZeroWallet();
        if (block.timestamp > deadline) revert DeadlineExpired(deadline, block.timestamp);
        if (deadline > block.timestamp + MAX_DEADLINE_DELAY) {
            revert DeadlineTooFar(deadline, block.timestamp + MAX_DEADLINE_DELAY);
        }
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, ownerOf(agentId), deadline))
        );
        if (!SignatureChecker.isValidSignatureNow(newWallet, digest, signature)) {
            revert InvalidWalletSignature(agentId, newWallet);
        }
        _writeAgentWallet(agentId, abi.encodePacked(newWallet));
    }

    function unsetAgentWallet(uint256 agentId) external onlyOwnerOrOperator(agentId) {
        _writeAgentWallet(agentId, "");
    }

    function getAgentWallet(uint256 agentId) external view returns (address) {
        bytes memory raw = _metadata[agentId][AGENT_WALLET_KEY];
        return raw.length == 20 ? address(bytes20(raw)) : address(0);
    }

    // ---------------------------------------------------------------- views

    /// @notice The owner, an approved-for-all operator or the token's approved address.
    function isAuthorizedOrOwner(address spender, uint256 agentId) public view returns (bool) {
        address owner = ownerOf(agentId);
        return spender == owner || isApprovedForAll(owner, spender) || getApproved(agentId) == spender;
    }

    /// @notice How many agents were registered; ids run from 0 to this minus one.
    function totalAgents() external view returns (uint256) {
        return _nextAgentId;
    }

    function getVersion() external pure returns (string memory) {
        return "2.0.0";
    }

    // ---------------------------------------------------------------- internals

    function _register(string memory agentURI, MetadataEntry[] memory metadata) private returns (uint256 agentId) {
        agentId = _nextAgentId++;
        _safeMint(msg.sender, agentId);
        if (bytes(agentURI).length > 0) {
            _setTokenURI(agentId, agentURI);
        }
        emit Registered(agentId, agentURI, msg.sender);
        _writeAgentWallet(agentId, abi.encodePacked(msg.sender));
        for (uint256 i; i < metadata.length; ++i) {
            _setMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
    }

    function _setMetadata(uint256 agentId, string memory key, bytes memory value) private {
        if (keccak256(bytes(key)) == AGENT_WALLET_KEY_HASH) revert ReservedMetadataKey(key);
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    function _writeAgentWallet(uint256 agentId, bytes memory value) private {
        _metadata[agentId][AGENT_WALLET_KEY] = value;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, value);
    }

    /// @dev A transfer (not a mint) clears the wallet before the Transfer event, so a new owner
    ///      never inherits the previous owner's payment address.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address from) {
        address current = _ownerOf(tokenId);
        if (current != address(0) && to != address(0)) {
            _writeAgentWallet(tokenId, "");
        }
        return super._update(to, tokenId, auth);
    }
}
