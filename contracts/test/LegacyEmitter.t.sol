// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {LegacyEmitter} from "../src/tools/LegacyEmitter.sol";

/// @notice Each legacy shape lands with the topic0 the reference lists.
contract LegacyEmitterTest is Test {
    LegacyEmitter emitter;

    function setUp() public {
        emitter = new LegacyEmitter();
        vm.recordLogs();
    }

    function test_stringMetadataSet() public {
        emitter.emitStringMetadataSet(1, "k", "v");
        _expectTopic0(0x2dbec70f51f7b79cc6a9d4ea913abc7d680b523e0763e3ad622612950757609c);
    }

    function test_uriUpdated() public {
        emitter.emitUriUpdated(1, "ipfs://x", address(this));
        _expectTopic0(0xb41beef75d9f8d55b985319b459e96f82453580af381391f1ad531eb8f8b5a3a);
    }

    function test_feedbackShapes() public {
        emitter.emitScoreFeedbackWithEndpoint(1, address(1), 90, "a", "b", "e", "u", bytes32(0));
        _expectTopic0(0x425311b4692766f8739eaeea31a86b5756c7c315d17abc22bc9e67628405d6a7);
        emitter.emitScoreFeedback(1, address(1), 90, "a", "b", "u", bytes32(0));
        _expectTopic0(0x744ec89483257dd170f417f1c3aef90840a2d763449395ba4f09e37f78a0c98b);
        emitter.emitBytes32TagFeedback(1, address(1), 90, bytes32("a"), bytes32("b"), "u", bytes32(0));
        _expectTopic0(0x54b3254e4cc01969e70376d20390cc2f6af90539d9adaa78a53ebcda17f78154);
        emitter.emitInt256Feedback(1, address(1), 1, -3, 1, "a", "b", "e", "u", bytes32(0));
        _expectTopic0(0x413f2d30fdbc0b49e55537333a7c6287556f671f40c7e2dc00fc7ca1ced350da);
        emitter.emitUint256Feedback(1, address(1), 1, 3, 1, "a", "b", "e", "u", bytes32(0));
        _expectTopic0(0xa96589249279e205e9aa2d2299594d8c5c745cf90e49514145db5dbdea256240);
    }

    function test_bytes32TagValidationResponse() public {
        emitter.emitBytes32TagValidationResponse(address(1), 1, bytes32("r"), 50, "u", bytes32(0), bytes32("t"));
        _expectTopic0(0xf224d3d5ad74301be48e4d51ca5f1b24c7946875887327585becc59165297dcf);
    }

    function _expectTopic0(bytes32 topic0) private {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 1, "one log");
        assertEq(logs[0].topics[0], topic0, "topic0 matches the reference");
    }
}
