// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IdentityRegistry} from "../erc8004/IdentityRegistry.sol";
import {ReputationRegistry} from "../erc8004/ReputationRegistry.sol";
import {ValidationRegistry} from "../erc8004/ValidationRegistry.sol";
import {AgentFactory} from "../agent/AgentFactory.sol";
import {AgentCard} from "../agent/AgentCard.sol";
import {CardData, Skill, PaymentTerms} from "../agent/AgentCardTypes.sol";
import {TestUSDC} from "../token/TestUSDC.sol";
import {SeederClient} from "./SeederClient.sol";
import {SeededWallet} from "./SeededWallet.sol";

/// @title Seeder
/// @notice Drives large workloads through the real contracts, many events per transaction, for
///         benchmarks and load tests. The Seeder owns the agents it creates; feedback, payments
///         and validation answers come from its clients, distinct addresses it deploys, because the
///         registries reject self-feedback and reputation counts distinct payers.
contract Seeder {
    IdentityRegistry public immutable identity;
    ReputationRegistry public immutable reputation;
    ValidationRegistry public immutable validation;
    AgentFactory public immutable factory;
    TestUSDC public immutable usdc;

    SeederClient[] public clients;
    uint256 private _requestNonce;

    constructor(
        IdentityRegistry identity_,
        ReputationRegistry reputation_,
        ValidationRegistry validation_,
        AgentFactory factory_,
        TestUSDC usdc_,
        uint256 clientCount
    ) {
        identity = identity_;
        reputation = reputation_;
        validation = validation_;
        factory = factory_;
        usdc = usdc_;
        for (uint256 i; i < clientCount; ++i) {
            clients.push(new SeederClient());
        }
    }

    function clientCount() external view returns (uint256) {
        return clients.length;
    }

    /// @notice Registers `count` ERC-8004 agents with URI `baseURI` + id and one metadata entry.
    function seedAgents(uint256 count, string calldata baseURI) external returns (uint256 firstId, uint256 lastId) {
        IdentityRegistry.MetadataEntry[] memory meta = new IdentityRegistry.MetadataEntry[](1);
        meta[0] = IdentityRegistry.MetadataEntry("seeded", bytes("true"));
        firstId = identity.totalAgents();
        for (uint256 i; i < count; ++i) {
            lastId = identity.register(string.concat(baseURI, _itoa(firstId + i)), meta);
        }
    }

    /// @notice Registers `count` ERC-8004 agents, each by a SeededWallet of its own, so each has a
    ///         distinct agentWallet (read them from the Registered events' owners).
    function seedWalletAgents(uint256 count) external {
        for (uint256 i; i < count; ++i) {
            new SeededWallet(identity);
        }
    }

    /// @notice `count` USDC transfers of `amount` from the Seeder's balance to addresses no agent
    ///         is bound to (derived from `salt`): the background traffic of a busy token.
    function seedTraffic(uint256 count, uint256 amount, uint256 salt) external {
        for (uint256 i; i < count; ++i) {
            usdc.transfer(address(uint160(uint256(keccak256(abi.encode(salt, i))))), amount);
        }
    }

    /// @notice Creates `count` factory agents whose payment terms point at themselves.
    function seedFactoryAgents(uint256 count) external returns (address[] memory agents) {
        agents = new address[](count);
        for (uint256 i; i < count; ++i) {
            agents[i] = factory.createAgent(address(this), _card(i, 0), 0);
        }
    }

    /// @notice `perAgent` feedback for each agent in [firstAgentId, firstAgentId + agentCount),
    ///         spread round-robin over the clients.
    function seedFeedback(uint256 firstAgentId, uint256 agentCount, uint256 perAgent) external {
        uint256 n = clients.length;
        uint256 k;
        for (uint256 a; a < agentCount; ++a) {
            for (uint256 j; j < perAgent; ++j) {
                clients[k++ % n].giveFeedback(
                    reputation, firstAgentId + a, int128(int256(50 + (k % 50))), uint8(k % 3), "quality", "seed", "https://agent.example/a2a", "", bytes32(k)
                );
            }
        }
    }

    /// @notice One validation request per agent, answered `responses` times by a client.
    function seedValidations(uint256 firstAgentId, uint256 agentCount, uint256 responses) external {
        uint256 n = clients.length;
        for (uint256 a; a < agentCount; ++a) {
            bytes32 requestHash = keccak256(abi.encode(address(this), ++_requestNonce));
            SeederClient validator = clients[a % n];
            validation.validationRequest(address(validator), firstAgentId + a, "ipfs://seed-request", requestHash);
            for (uint256 r; r < responses; ++r) {
                validator.respond(validation, requestHash, uint8((a + r) % 101), "ipfs://seed-response", bytes32(r), "seed");
            }
        }
    }

    /// @notice `rounds` card updates on each of `agents` (which must be owned by the Seeder).
    function seedCardUpdates(address[] calldata agents, uint256 rounds) external {
        for (uint256 r; r < rounds; ++r) {
            for (uint256 i; i < agents.length; ++i) {
                AgentCard(payable(agents[i])).updateCard(_card(i, r + 1));
            }
        }
    }

    /// @notice Gives each client `amount` USDC from the Seeder's balance.
    function fundClients(uint256 amount) external {
        for (uint256 i; i < clients.length; ++i) {
            usdc.transfer(address(clients[i]), amount);
        }
    }

    /// @notice `perPayee` plain USDC transfers of `amount` into each payee, from rotating clients.
    function seedPayments(address[] calldata payees, uint256 perPayee, uint256 amount) external {
        uint256 n = clients.length;
        uint256 k;
        for (uint256 i; i < payees.length; ++i) {
            for (uint256 j; j < perPayee; ++j) {
                clients[k++ % n].transferToken(usdc, payees[i], amount);
            }
        }
    }

    /// @notice `perAgent` calls of `AgentCard.pay` in USDC into each agent contract, from rotating clients.
    function seedAgentPayments(address[] calldata agents, uint256 perAgent, uint256 amount) external {
        uint256 n = clients.length;
        uint256 k;
        for (uint256 i; i < agents.length; ++i) {
            for (uint256 j; j < perAgent; ++j) {
                clients[k++ % n].payAgent(AgentCard(payable(agents[i])), usdc, amount);
            }
        }
    }

    /// @notice Accepts the ERC-8004 identity tokens it mints.
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function _card(uint256 i, uint256 round) private view returns (CardData memory c) {
        c.name = string.concat("Seeded agent ", _itoa(i));
        c.description = string.concat("Benchmark agent, revision ", _itoa(round));
        c.url = "https://agent.example/a2a";
        c.version = string.concat("1.0.", _itoa(round));
        c.defaultInputModes = new string[](1);
        c.defaultInputModes[0] = "text/plain";
        c.defaultOutputModes = new string[](1);
        c.defaultOutputModes[0] = "application/json";
        c.skills = new Skill[](1);
        string[] memory tags = new string[](2);
        tags[0] = "seed";
        tags[1] = i % 2 == 0 ? "even" : "odd";
        c.skills[0] = Skill("summarize", "Summarize", "Summarizes text", tags);
        c.payment = PaymentTerms(address(usdc), block.chainid, 10_000, address(0));
    }

    function _itoa(uint256 v) private pure returns (string memory) {
        if (v == 0) return "0";
        uint256 len;
        for (uint256 t = v; t != 0; t /= 10) ++len;
        bytes memory out = new bytes(len);
        for (; v != 0; v /= 10) out[--len] = bytes1(uint8(48 + v % 10));
        return string(out);
    }
}
