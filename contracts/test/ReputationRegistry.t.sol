// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {IdentityRegistry} from "../src/erc8004/IdentityRegistry.sol";
import {ReputationRegistry} from "../src/erc8004/ReputationRegistry.sol";

contract ReputationRegistryTest is Test {
    bytes32 constant NEW_FEEDBACK = 0x6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc;
    bytes32 constant FEEDBACK_REVOKED = 0x25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d;
    bytes32 constant RESPONSE_APPENDED = 0xb1c6be0b5b8aef6539e2fac0fd131a2faa7b49edf8e505b5eb0ad487d56051d4;

    IdentityRegistry identity;
    ReputationRegistry reputation;
    address owner = address(0xA11CE);
    address operator = address(0x0BE);
    address client = address(0xC1);
    address client2 = address(0xC2);
    uint256 id;

    function setUp() public {
        identity = new IdentityRegistry();
        reputation = new ReputationRegistry(identity);
        vm.prank(owner);
        id = identity.register("ipfs://agent");
    }

    function test_feedbackFromOwnerIsRejected() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.SelfFeedback.selector, id, owner));
        reputation.giveFeedback(id, 90, 0, "", "", "", "", bytes32(0));
    }

    function test_feedbackFromOperatorIsRejected() public {
        vm.prank(owner);
        identity.setApprovalForAll(operator, true);
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.SelfFeedback.selector, id, operator));
        reputation.giveFeedback(id, 90, 0, "", "", "", "", bytes32(0));
    }

    function test_moreThan18DecimalsIsRejected() public {
        vm.prank(client);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.TooManyDecimals.selector, 19));
        reputation.giveFeedback(id, 1, 19, "", "", "", "", bytes32(0));
    }

    function test_valueBeyond1e38IsRejected() public {
        int128 tooBig = 1e38 + 1;
        vm.prank(client);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.ValueOutOfRange.selector, tooBig));
        reputation.giveFeedback(id, tooBig, 0, "", "", "", "", bytes32(0));
    }

    function test_feedbackForUnknownAgentIsRejected() public {
        vm.prank(client);
        vm.expectRevert();
        reputation.giveFeedback(id + 7, 1, 0, "", "", "", "", bytes32(0));
    }

    function test_indexesAreOneBasedPerClientAndEventCarriesEverything() public {
        vm.recordLogs();
        vm.startPrank(client);
        reputation.giveFeedback(id, -5, 1, "speed", "p95", "https://agent.example/a2a", "ipfs://fb", bytes32("h"));
        reputation.giveFeedback(id, 7, 0, "speed", "", "", "", bytes32(0));
        vm.stopPrank();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs[0].topics[0], NEW_FEEDBACK, "topic0");
        assertEq(logs[0].topics[3], keccak256("speed"), "indexed tag1 hashed");
        (uint64 index, int128 value, uint8 decimals, string memory tag1,, string memory endpoint,, bytes32 hash) =
            abi.decode(logs[0].data, (uint64, int128, uint8, string, string, string, string, bytes32));
        assertEq(uint256(index), 1, "first index is 1");
        assertEq(int256(value), -5, "signed value");
        assertEq(uint256(decimals), 1, "decimals");
        assertEq(tag1, "speed", "tag1 plain");
        assertEq(endpoint, "https://agent.example/a2a", "endpoint");
        assertEq(hash, bytes32("h"), "hash");
        assertEq(uint256(reputation.getLastIndex(id, client)), 2, "second index is 2");
        vm.prank(client2);
        reputation.giveFeedback(id, 1, 0, "", "", "", "", bytes32(0));
        assertEq(uint256(reputation.getLastIndex(id, client2)), 1, "indexes are per client");
        assertEq(reputation.getClients(id).length, 2, "two clients");
    }

    function test_revokeOnlyOwnFeedbackOnce() public {
        vm.prank(client);
        reputation.giveFeedback(id, 80, 0, "", "", "", "", bytes32(0));
        vm.prank(client2);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.NoSuchFeedback.selector, id, client2, 1));
        reputation.revokeFeedback(id, 1);

        vm.recordLogs();
        vm.prank(client);
        reputation.revokeFeedback(id, 1);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs[0].topics[0], FEEDBACK_REVOKED, "revoked event");
        assertEq(logs[0].topics[3], bytes32(uint256(1)), "index indexed");
        (,,,, bool revoked) = reputation.readFeedback(id, client, 1);
        assertTrue(revoked, "marked revoked");

        vm.prank(client);
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.AlreadyRevoked.selector, id, client, 1));
        reputation.revokeFeedback(id, 1);
    }

    function test_anyoneMayAppendResponsesRepeatedly() public {
        vm.prank(client);
        reputation.giveFeedback(id, 80, 0, "", "", "", "", bytes32(0));
        vm.recordLogs();
        vm.startPrank(owner);
        reputation.appendResponse(id, client, 1, "ipfs://r1", bytes32("r1"));
        reputation.appendResponse(id, client, 1, "ipfs://r2", bytes32("r2"));
        vm.stopPrank();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 2, "two responses");
        assertEq(logs[1].topics[0], RESPONSE_APPENDED, "topic0");
        assertEq(logs[1].topics[3], bytes32(uint256(uint160(owner))), "responder indexed");
        assertEq(uint256(reputation.getResponseCount(id, client, 1, owner)), 2, "count");

        vm.expectRevert(ReputationRegistry.EmptyResponseURI.selector);
        reputation.appendResponse(id, client, 1, "", bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(ReputationRegistry.NoSuchFeedback.selector, id, client, 2));
        reputation.appendResponse(id, client, 2, "ipfs://r", bytes32(0));
    }

    function test_summaryUsesModeOfDecimalsAndSkipsRevoked() public {
        vm.startPrank(client);
        reputation.giveFeedback(id, 95, 0, "q", "", "", "", bytes32(0)); // 95
        reputation.giveFeedback(id, 8750, 2, "q", "", "", "", bytes32(0)); // 87.50
        reputation.giveFeedback(id, 9000, 2, "other", "", "", "", bytes32(0)); // 90.00
        reputation.giveFeedback(id, 1, 0, "q", "", "", "", bytes32(0)); // revoked below
        reputation.revokeFeedback(id, 4);
        vm.stopPrank();
        address[] memory clients = new address[](1);
        clients[0] = client;

        (uint64 count, int128 value, uint8 decimals) = reputation.getSummary(id, clients, "", "");
        assertEq(uint256(count), 3, "revoked skipped");
        assertEq(uint256(decimals), 2, "two decimals is the mode");
        assertEq(int256(value), 9083, "(95 + 87.5 + 90) / 3 = 90.83");

        (count, value, decimals) = reputation.getSummary(id, clients, "q", "");
        assertEq(uint256(count), 2, "tag filter");
        assertEq(uint256(decimals), 0, "tie goes to the smaller decimals");
        assertEq(int256(value), 91, "(95 + 87.5) / 2 = 91.25 -> 91");

        vm.expectRevert(ReputationRegistry.NoClients.selector);
        reputation.getSummary(id, new address[](0), "", "");
    }
}
