// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {IdentityRegistry} from "../src/erc8004/IdentityRegistry.sol";
import {ReputationRegistry} from "../src/erc8004/ReputationRegistry.sol";
import {ValidationRegistry} from "../src/erc8004/ValidationRegistry.sol";
import {AgentFactory} from "../src/agent/AgentFactory.sol";
import {AgentCard} from "../src/agent/AgentCard.sol";
import {TestUSDC} from "../src/token/TestUSDC.sol";
import {Seeder} from "../src/tools/Seeder.sol";
import {SeederClient} from "../src/tools/SeederClient.sol";

contract SeederTest is Test {
    IdentityRegistry identity;
    ReputationRegistry reputation;
    ValidationRegistry validation;
    AgentFactory factory;
    TestUSDC usdc;
    Seeder seeder;

    function setUp() public {
        identity = new IdentityRegistry();
        reputation = new ReputationRegistry(identity);
        validation = new ValidationRegistry(identity);
        factory = new AgentFactory();
        usdc = new TestUSDC();
        seeder = new Seeder(identity, reputation, validation, factory, usdc, 4);
        usdc.mint(address(seeder), 1_000_000_000);
    }

    function test_seedsEveryWorkloadThroughTheRealContracts() public {
        (uint256 first, uint256 last) = seeder.seedAgents(5, "ipfs://seed/");
        assertEq(first, 0, "first id");
        assertEq(last, 4, "last id");
        assertEq(identity.tokenURI(3), "ipfs://seed/3", "uri carries the id");

        seeder.seedFeedback(first, 5, 3);
        assertEq(reputation.getClients(2).length, 3, "three distinct clients per agent");

        seeder.seedValidations(first, 5, 2);
        assertEq(validation.getAgentValidations(4).length, 1, "one request per agent");

        address[] memory agents = seeder.seedFactoryAgents(3);
        assertEq(factory.childrenCount(), 3, "factory children");
        seeder.seedCardUpdates(agents, 2);
        assertEq(AgentCard(payable(agents[1])).card().version, "1.0.2", "two update rounds");

        seeder.fundClients(1_000);
        seeder.seedPayments(agents, 2, 7);
        seeder.seedAgentPayments(agents, 1, 3);
        assertEq(usdc.balanceOf(agents[0]), 17, "two transfers and one pay()");
        assertTrue(AgentCard(payable(agents[0])).hasPaid(address(seeder.clients(0))), "payer recorded");
    }

    function test_walletAgentsEachOwnAWalletAndTrafficGoesElsewhere() public {
        seeder.seedWalletAgents(3);
        assertEq(identity.totalAgents(), 3, "three agents");
        address first = identity.ownerOf(0);
        assertTrue(first != address(seeder), "owned by a registrant of its own");
        assertEq(identity.getAgentWallet(0), first, "the registrant is the wallet");
        assertTrue(identity.getAgentWallet(1) != first, "wallets are distinct");
        assertTrue(identity.getAgentWallet(2) != identity.getAgentWallet(1), "all of them");

        uint256 before = usdc.balanceOf(address(seeder));
        seeder.seedTraffic(5, 7, 42);
        assertEq(usdc.balanceOf(address(seeder)), before - 35, "five transfers of seven");
        assertEq(usdc.balanceOf(first), 0, "none to an agent's wallet");
    }

    function test_clientsObeyOnlyTheirSeeder() public {
        SeederClient client = seeder.clients(0);
        vm.expectRevert(abi.encodeWithSelector(SeederClient.NotSeeder.selector, address(this)));
        client.transferToken(usdc, address(this), 1);
    }
}
