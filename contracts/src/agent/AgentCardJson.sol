// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {CardData, Skill} from "./AgentCardTypes.sol";
import {JsonWriter as J} from "../lib/JsonWriter.sol";

/// @title AgentCardJson
/// @notice Renders an agent contract's stored card as an A2A v0.3 Agent Card. Payment terms become
///         the a2a-x402 extension with the terms as its params.
library AgentCardJson {
    string internal constant PROTOCOL_VERSION = "0.3.0";
    string internal constant X402_EXTENSION = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";

    function render(CardData memory c) internal pure returns (string memory) {
        string memory head = string.concat(
            "{",
            J.member("protocolVersion", J.str(PROTOCOL_VERSION)),
            ",",
            J.member("name", J.str(c.name)),
            ",",
            J.member("description", J.str(c.description)),
            ",",
            J.member("url", J.str(c.url)),
            ",",
            J.member("preferredTransport", J.str("JSONRPC")),
            ",",
            J.member("version", J.str(c.version))
        );
        return string.concat(
            head,
            ",",
            J.member("capabilities", _capabilities(c)),
            ",",
            J.member("defaultInputModes", J.strArray(c.defaultInputModes)),
            ",",
            J.member("defaultOutputModes", J.strArray(c.defaultOutputModes)),
            ",",
            J.member("skills", _skills(c.skills)),
            "}"
        );
    }

    function _capabilities(CardData memory c) private pure returns (string memory out) {
        out = string.concat(
            "{", J.member("streaming", J.boolean(c.streaming)), ",", J.member("pushNotifications", J.boolean(c.pushNotifications))
        );
        if (c.payment.payTo != address(0)) {
            out = string.concat(out, ",", J.member("extensions", string.concat("[", _x402Extension(c), "]")));
        }
        out = string.concat(out, "}");
    }

    function _x402Extension(CardData memory c) private pure returns (string memory) {
        string memory params = string.concat(
            "{",
            J.member("asset", J.str(Strings.toHexString(c.payment.asset))),
            ",",
            J.member("chainId", Strings.toString(c.payment.chainId)),
            ",",
            J.member("amount", J.str(Strings.toString(c.payment.amount))),
            ",",
            J.member("payTo", J.str(Strings.toHexString(c.payment.payTo))),
            "}"
        );
        return string.concat(
            "{",
            J.member("uri", J.str(X402_EXTENSION)),
            ",",
            J.member("required", "false"),
            ",",
            J.member("params", params),
            "}"
        );
    }

    function _skills(Skill[] memory skills) private pure returns (string memory out) {
        out = "[";
        for (uint256 i; i < skills.length; ++i) {
            out = string.concat(
                out,
                i == 0 ? "" : ",",
                "{",
                J.member("id", J.str(skills[i].id)),
                ",",
                J.member("name", J.str(skills[i].name)),
                ",",
                J.member("description", J.str(skills[i].description)),
                ",",
                J.member("tags", J.strArray(skills[i].tags)),
                "}"
            );
        }
        out = string.concat(out, "]");
    }
}
