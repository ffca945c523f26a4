// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {CardData, Skill, PaymentTerms} from "../../src/agent/AgentCardTypes.sol";

/// @notice Sample data shared by the contract tests.
library Fixtures {
    function card(string memory name) internal pure returns (CardData memory c) {
        c.name = name;
        c.description = "Translates \"quoted\" text\nacross lines";
        c.url = "https://agent.example/a2a";
        c.version = "1.2.0";
        c.defaultInputModes = new string[](1);
        c.defaultInputModes[0] = "text/plain";
        c.defaultOutputModes = new string[](2);
        c.defaultOutputModes[0] = "text/plain";
        c.defaultOutputModes[1] = "application/json";
        c.streaming = true;
        string[] memory tags = new string[](2);
        tags[0] = "translation";
        tags[1] = "language";
        c.skills = new Skill[](1);
        c.skills[0] = Skill("translate", "Translate", "Translates between languages", tags);
    }
}
