// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice One A2A skill as the agent contract stores it.
struct Skill {
    string id;
    string name;
    string description;
    string[] tags;
}

/// @notice x402 payment terms: pay `amount` of `asset` on chain `chainId` to `payTo` per call.
struct PaymentTerms {
    address asset;
    uint256 chainId;
    uint256 amount;
    address payTo;
}

/// @notice Every field of the card an agent contract anchors on-chain.
/// @dev `cardURI` optionally points at a richer off-chain card whose bytes hash to `cardHash`.
struct CardData {
    string name;
    string description;
    string url;
    string version;
    string[] defaultInputModes;
    string[] defaultOutputModes;
    bool streaming;
    bool pushNotifications;
    Skill[] skills;
    PaymentTerms payment;
    string cardURI;
    bytes32 cardHash;
}
