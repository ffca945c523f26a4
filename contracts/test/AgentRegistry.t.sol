// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Fixtures} from "./base/Fixtures.sol";
import {AgentCard} from "../src/agent/AgentCard.sol";
import {AgentRegistry} from "../src/agent/AgentRegistry.sol";

contract AgentRegistryTest is Test {
    event AgentRegistered(address indexed agent, address indexed owner, string metadataURI, bool pending);
    event AgentApproved(address indexed agent, address indexed curator);
    event AgentRemoved(address indexed agent, address indexed curator, string reason);
    event AgentUpdated(address indexed agent, string metadataURI);
    event AgentDeregistered(address indexed agent, address indexed owner);

    address owner = address(0xA11CE);
    address stranger = address(0xBAD);
    address curator = address(0xC0C0);
    AgentCard agent;
    AgentRegistry open;
    AgentRegistry curated;

    function setUp() public {
        agent = new AgentCard(owner, Fixtures.card("Enrolled"), 0);
        open = new AgentRegistry(false);
        curated = new AgentRegistry(true);
        curated.addCurator(curator);
    }

    function test_rejectsEnrolmentByNonOwner() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentRegistry.NotAgentOwner.selector, address(agent), stranger));
        open.register(address(agent), "ipfs://meta");
    }

    function test_rejectsContractsWithoutOwner() public {
        vm.expectRevert();
        open.register(address(open), "ipfs://meta");
    }

    function test_permissionlessEnrolmentIsImmediate() public {
        vm.expectEmit(true, true, false, true, address(open));
        emit AgentRegistered(address(agent), owner, "ipfs://meta", false);
        vm.prank(owner);
        open.register(address(agent), "ipfs://meta");
        assertEq(uint256(open.statusOf(address(agent))), uint256(AgentRegistry.Status.Active), "active");
        vm.prank(owner);
        vm.expectRevert(
            abi.encodeWithSelector(AgentRegistry.AlreadyEnrolled.selector, address(agent), AgentRegistry.Status.Active)
        );
        open.register(address(agent), "ipfs://again");
    }

    function test_updateAndDeregisterByOwnerOnly() public {
        vm.startPrank(owner);
        open.register(address(agent), "ipfs://meta");
        vm.expectEmit(true, false, false, true, address(open));
        emit AgentUpdated(address(agent), "ipfs://meta2");
        open.update(address(agent), "ipfs://meta2");
        vm.stopPrank();
        assertEq(open.metadataURIOf(address(agent)), "ipfs://meta2", "updated uri");

        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentRegistry.NotAgentOwner.selector, address(agent), stranger));
        open.deregister(address(agent));

        vm.expectEmit(true, true, false, false, address(open));
        emit AgentDeregistered(address(agent), owner);
        vm.prank(owner);
        open.deregister(address(agent));
        assertEq(uint256(open.statusOf(address(agent))), uint256(AgentRegistry.Status.None), "gone");
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(AgentRegistry.NotEnrolled.selector, address(agent)));
        open.update(address(agent), "ipfs://meta3");
        assertEq(open.enrolledCount(), 1, "history keeps the agent");
    }

    function test_curatedEnrolmentWaitsForApproval() public {
        vm.prank(owner);
        curated.register(address(agent), "ipfs://meta");
        assertEq(uint256(curated.statusOf(address(agent))), uint256(AgentRegistry.Status.Pending), "pending");

        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentRegistry.NotCurator.selector, stranger));
        curated.approve(address(agent));

        vm.expectEmit(true, true, false, false, address(curated));
        emit AgentApproved(address(agent), curator);
        vm.prank(curator);
        curated.approve(address(agent));
        assertEq(uint256(curated.statusOf(address(agent))), uint256(AgentRegistry.Status.Active), "active");

        vm.expectEmit(true, true, false, true, address(curated));
        emit AgentRemoved(address(agent), curator, "spam");
        vm.prank(curator);
        curated.remove(address(agent), "spam");
        assertEq(uint256(curated.statusOf(address(agent))), uint256(AgentRegistry.Status.Removed), "removed");
    }

    function test_curatorRulesDoNotApplyToOpenRegistry() public {
        vm.expectRevert(AgentRegistry.NotCuratedRegistry.selector);
        open.addCurator(curator);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(AgentRegistry.NotAdmin.selector, stranger));
        curated.addCurator(stranger);
    }
}
