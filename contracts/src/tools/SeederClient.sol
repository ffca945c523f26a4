// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ReputationRegistry} from "../erc8004/ReputationRegistry.sol";
import {ValidationRegistry} from "../erc8004/ValidationRegistry.sol";
import {AgentCard} from "../agent/AgentCard.sol";

/// @title SeederClient
/// @notice One distinct caller for the Seeder: gives feedback, pays and answers validations on its
///         behalf. Only the Seeder that deployed it may drive it.
contract SeederClient {
    address public immutable seeder;

    error NotSeeder(address caller);

    constructor() {
        seeder = msg.sender;
    }

    modifier onlySeeder() {
        if (msg.sender != seeder) revert NotSeeder(msg.sender);
        _;
    }

    function giveFeedback(
        ReputationRegistry reputation,
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external onlySeeder {
        reputation.giveFeedback(agentId, value, valueDecimals, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    function respond(
        ValidationRegistry validation,
        bytes32 requestHash,
        uint8 response,
        string calldata responseURI,
        bytes32 responseHash,
        string calldata tag
    ) external onlySeeder {
        validation.validationResponse(requestHash, response, responseURI, responseHash, tag);
    }

    function transferToken(IERC20 token, address to, uint256 amount) external onlySeeder {
        token.transfer(to, amount);
    }

    function payAgent(AgentCard agent, IERC20 token, uint256 amount) external onlySeeder {
        token.approve(address(agent), amount);
        agent.pay(address(token), amount);
    }
}
