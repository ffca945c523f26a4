// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {Fixtures} from "./base/Fixtures.sol";
import {AgentCard} from "../src/agent/AgentCard.sol";
import {AgentFactory} from "../src/agent/AgentFactory.sol";
import {CardData, PaymentTerms} from "../src/agent/AgentCardTypes.sol";
import {TestUSDC} from "../src/token/TestUSDC.sol";

contract AgentCardTest is Test {
    event CardUpdated(CardData card);
    event PaymentReceived(address indexed payer, address indexed token, uint256 amount);
    event Withdrawn(address indexed token, address indexed to, uint256 amount);
    event Rated(address indexed rater, uint8 score);
    event AgentCreated(address indexed agent, address indexed owner, uint256 index);

    address owner = address(0xA11CE);
    address payer = address(0xB0B);
    address stranger = address(0xBAD);
    AgentFactory factory;
    AgentCard agent;
    TestUSDC usdc;

    function setUp() public {
        factory = new AgentFactory();
        usdc = new TestUSDC();
        agent = AgentCard(payable(factory.createAgent(owner, Fixtures.card("Translator"), 1 hours)));
        usdc.mint(payer, 1_000_000);
        vm.deal(payer, 10 ether);
    }

    function test_factoryEmitsChildAndOwnerAndEnumerates() public {
        vm.recordLogs();
        address second = factory.createAgent(payer, Fixtures.card("Second"), 0);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 i = findLog(logs, AgentCreated.selector);
        assertEq(logs[i].topics[1], bytes32(uint256(uint160(second))), "child in topic 1");
        assertEq(logs[i].topics[2], bytes32(uint256(uint160(payer))), "owner in topic 2");
        assertEq(abi.decode(logs[i].data, (uint256)), 1, "index");
        assertEq(factory.childrenCount(), 2, "children count");
        assertEq(factory.childAt(0), address(agent), "first child");
        address[] memory page = factory.children(1, 10);
        assertEq(page.length, 1, "page length");
        assertEq(page[0], second, "page content");
        assertTrue(factory.isChild(second), "isChild");
        assertEq(AgentCard(payable(second)).owner(), payer, "owner of child");
    }

    function test_cloneAndImplementationCannotBeReinitialised() public {
        vm.expectRevert(AgentCard.AlreadyInitialized.selector);
        agent.initialize(stranger, Fixtures.card("Hijack"), 0);
        AgentCard implementation = AgentCard(payable(factory.implementation()));
        vm.expectRevert(AgentCard.AlreadyInitialized.selector);
        implementation.initialize(stranger, Fixtures.card("Hijack"), 0);
    }

    function test_storesCardAndRendersEscapedA2AJson() public view {
        assertEq(agent.card().name, "Translator", "name");
        assertEq(agent.card().skills[0].tags[1], "language", "skill tag");
        string memory json = agent.agentCard();
        assertEq(
            json,
            string.concat(
                '{"protocolVersion":"0.3.0","name":"Translator",',
                '"description":"Translates \\"quoted\\" text\\nacross lines",',
                '"url":"https://agent.example/a2a","preferredTransport":"JSONRPC","version":"1.2.0",',
                '"capabilities":{"streaming":true,"pushNotifications":false},',
                '"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain","application/json"],',
                '"skills":[{"id":"translate","name":"Translate","description":"Translates between languages",',
                '"tags":["translation","language"]}]}'
            ),
            "agentCard json"
        );
    }

    function test_paymentTermsAppearAsX402Extension() public {
        vm.prank(owner);
        agent.setPaymentTerms(PaymentTerms(address(0x1234), 8453, 10_000, address(agent)));
        string memory json = agent.agentCard();
        string memory expected = string.concat(
            '"extensions":[{"uri":"https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2",',
            '"required":false,"params":{"asset":"0x0000000000000000000000000000000000001234","chainId":8453,',
            '"amount":"10000","payTo":"',
            _lower(address(agent)),
            '"}}]'
        );
        assertTrue(_contains(json, expected), "x402 extension rendered");
    }

    function test_onlyOwnerUpdatesAndUpdateEmitsWholeCard() public {
        CardData memory next = Fixtures.card("Renamed");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.NotOwner.selector, stranger));
        agent.updateCard(next);

        vm.expectEmit(false, false, false, true, address(agent));
        emit CardUpdated(next);
        vm.prank(owner);
        agent.updateCard(next);
        assertEq(agent.card().name, "Renamed", "renamed");

        vm.prank(owner);
        agent.setCardURI("https://agent.example/card.json", keccak256("card bytes"));
        assertEq(agent.card().cardHash, keccak256("card bytes"), "card hash anchored");
        assertEq(agent.card().name, "Renamed", "other fields kept");
    }

    function test_heartbeatAndActiveFlag() public {
        assertTrue(agent.isAlive(), "alive at creation");
        vm.warp(block.timestamp + 2 hours);
        assertEq(agent.isAlive(), false, "stale after interval");
        vm.prank(owner);
        agent.heartbeat();
        assertTrue(agent.isAlive(), "alive after heartbeat");
        vm.prank(owner);
        agent.setActive(false);
        assertEq(agent.isAlive(), false, "inactive is not alive");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.NotOwner.selector, stranger));
        agent.heartbeat();
    }

    function test_nativeAndTokenPaymentsAreRecorded() public {
        vm.expectEmit(true, true, false, true, address(agent));
        emit PaymentReceived(payer, address(0), 1 ether);
        vm.prank(payer);
        (bool ok,) = address(agent).call{value: 1 ether}("");
        assertTrue(ok, "plain native transfer accepted");

        vm.startPrank(payer);
        usdc.approve(address(agent), 500);
        vm.expectEmit(true, true, false, true, address(agent));
        emit PaymentReceived(payer, address(usdc), 500);
        agent.pay(address(usdc), 500);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.WrongNativeAmount.selector, 1, 2));
        agent.pay{value: 1}(address(0), 2);
        vm.expectRevert(AgentCard.ZeroAmount.selector);
        agent.pay(address(usdc), 0);
        vm.stopPrank();

        assertEq(usdc.balanceOf(address(agent)), 500, "tokens held by agent");
        assertEq(agent.paidBy(payer, address(usdc)), 500, "paid tally");
        assertEq(address(agent).balance, 1 ether, "native held by agent");
    }

    function test_onlyOwnerWithdraws() public {
        vm.prank(payer);
        agent.pay{value: 1 ether}(address(0), 1 ether);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.NotOwner.selector, stranger));
        agent.withdraw(address(0), stranger, 1 ether);

        vm.expectEmit(true, true, false, true, address(agent));
        emit Withdrawn(address(0), owner, 1 ether);
        vm.prank(owner);
        agent.withdraw(address(0), owner, 1 ether);
        assertEq(owner.balance, 1 ether, "owner received");
    }

    function test_ratingWithoutPayingIsRejected() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.NotAPayer.selector, stranger));
        agent.rate(80);
    }

    function test_payerRatesAndScoreIsBounded() public {
        vm.startPrank(payer);
        agent.pay{value: 1}(address(0), 1);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.ScoreTooHigh.selector, 101));
        agent.rate(101);
        vm.expectEmit(true, false, false, true, address(agent));
        emit Rated(payer, 90);
        agent.rate(90);
        agent.rate(70);
        vm.stopPrank();
        assertEq(agent.ratingOf(payer), 70, "latest rating wins");
    }

    function test_ownershipTransfer() public {
        vm.prank(owner);
        agent.transferOwnership(payer);
        assertEq(agent.owner(), payer, "new owner");
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(AgentCard.NotOwner.selector, owner));
        agent.setActive(false);
    }

    function test_directDeploymentWorksWithoutFactory() public {
        AgentCard direct = new AgentCard(owner, Fixtures.card("Direct"), 0);
        assertEq(direct.owner(), owner, "owner");
        assertEq(direct.card().name, "Direct", "card");
    }

    function _contains(string memory haystack, string memory needle) private pure returns (bool) {
        bytes memory h = bytes(haystack);
        bytes memory n = bytes(needle);
        if (n.length > h.length) return false;
        for (uint256 i; i + n.length <= h.length; ++i) {
            bool same = true;
            for (uint256 j; j < n.length && same; ++j) {
                same = h[i + j] == n[j];
            }
            if (same) return true;
        }
        return false;
    }

    function _lower(address a) private pure returns (string memory) {
        bytes memory hexChars = "0123456789abcdef";
        bytes memory out = new bytes(42);
        out[0] = "0";
        out[1] = "x";
        uint160 v = uint160(a);
        for (uint256 i = 41; i > 1; --i) {
            out[i] = hexChars[v & 0xf];
            v >>= 4;
        }
        return string(out);
    }
}
