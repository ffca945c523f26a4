// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IdentityRegistry} from "../erc8004/IdentityRegistry.sol";

/// @title SeededWallet
/// @notice Registers one ERC-8004 agent from its constructor and keeps it: the registrant becomes
///         the agent's owner and its agentWallet, so every seeded agent gets a wallet of its own,
///         as on networks where each registered agent has one. It has no code to receive the
///         token with: while a contract is being constructed it counts as an account.
contract SeededWallet {
    constructor(IdentityRegistry identity) {
        identity.register();
    }
}
