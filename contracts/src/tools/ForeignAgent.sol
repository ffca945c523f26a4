// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice An agent contract from some other project: it has an owner, so registries enrol it,
///         and none of AgentCard's card, liveness or heartbeat functions. Tests use it to check
///         that the indexer records what it could not read about an enrolled agent and goes on.
contract ForeignAgent {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }
}
