// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {IdentityRegistry} from "../src/erc8004/IdentityRegistry.sol";

contract IdentityRegistryTest is Test {
    bytes32 constant TRANSFER = keccak256("Transfer(address,address,uint256)");
    bytes32 constant METADATA_UPDATE = keccak256("MetadataUpdate(uint256)");
    bytes32 constant REGISTERED = 0xca52e62c367d81bb2e328eb795f7c7ba24afb478408a26c0e201d155c449bc4a;
    bytes32 constant METADATA_SET = 0x2c149ed548c6d2993cd73efe187df6eccabe4538091b33adbd25fafdb8a1468b;
    bytes32 constant URI_UPDATED = 0x3a2c7fffc2cba7582c690e3b82c453ea02a308326a98a3ad7576c606336409fb;

    IdentityRegistry identity;
    address owner = address(0xA11CE);
    address stranger = address(0xBAD);
    uint256 walletKey = 0xBEEF;
    address wallet;

    function setUp() public {
        identity = new IdentityRegistry();
        wallet = vm.addr(walletKey);
        vm.warp(1_700_000_000);
    }

    function test_registerEmitsInSpecOrderAndStartsAtZero() public {
        IdentityRegistry.MetadataEntry[] memory meta = new IdentityRegistry.MetadataEntry[](1);
        meta[0] = IdentityRegistry.MetadataEntry("role", bytes("translator"));
        vm.recordLogs();
        vm.prank(owner);
        uint256 id = identity.register("ipfs://reg", meta);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(id, 0, "first id is zero");
        assertEq(logs.length, 5, "five events");
        assertEq(logs[0].topics[0], TRANSFER, "mint first");
        assertEq(logs[1].topics[0], METADATA_UPDATE, "then ERC-4906");
        assertEq(logs[2].topics[0], REGISTERED, "then Registered");
        assertEq(logs[2].topics[2], bytes32(uint256(uint160(owner))), "owner indexed");
        (string memory uri) = abi.decode(logs[2].data, (string));
        assertEq(uri, "ipfs://reg", "uri in data");
        assertEq(logs[3].topics[0], METADATA_SET, "then agentWallet");
        assertEq(logs[3].topics[2], keccak256("agentWallet"), "indexed key is hashed");
        (string memory key, bytes memory value) = abi.decode(logs[3].data, (string, bytes));
        assertEq(key, "agentWallet", "plain key in data");
        assertEq(value, abi.encodePacked(owner), "wallet is 20 raw bytes");
        assertEq(logs[4].topics[0], METADATA_SET, "then each entry");
        assertEq(identity.getAgentWallet(id), owner, "wallet defaults to owner");
        assertEq(identity.tokenURI(id), "ipfs://reg", "token uri");
        assertEq(identity.getMetadata(id, "role"), bytes("translator"), "metadata stored");
    }

    function test_registerWithoutUriSkipsMetadataUpdate() public {
        vm.recordLogs();
        vm.prank(owner);
        identity.register();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 3, "Transfer, Registered, MetadataSet");
        assertEq(logs[1].topics[0], REGISTERED, "Registered second");
    }

    function test_uriAndMetadataNeedOwnerOrOperator() public {
        vm.prank(owner);
        uint256 id = identity.register("ipfs://a");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(IdentityRegistry.NotAuthorized.selector, id, stranger));
        identity.setAgentURI(id, "ipfs://evil");

        vm.prank(owner);
        identity.setApprovalForAll(stranger, true);
        vm.recordLogs();
        vm.prank(stranger);
        identity.setAgentURI(id, "ipfs://b");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 i = findLog(logs, URI_UPDATED);
        assertEq(logs[i].topics[2], bytes32(uint256(uint160(stranger))), "updatedBy is the operator");
        assertEq(identity.tokenURI(id), "ipfs://b", "uri updated");
    }

    function test_agentWalletKeyIsReserved() public {
        vm.startPrank(owner);
        uint256 id = identity.register();
        vm.expectRevert(abi.encodeWithSelector(IdentityRegistry.ReservedMetadataKey.selector, "agentWallet"));
        identity.setMetadata(id, "agentWallet", abi.encodePacked(stranger));
        vm.stopPrank();
    }

    function test_setAgentWalletWithValidProof() public {
        vm.prank(owner);
        uint256 id = identity.register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _walletProof(walletKey, id, wallet, owner, deadline);
        vm.prank(owner);
        identity.setAgentWallet(id, wallet, deadline, sig);
        assertEq(identity.getAgentWallet(id), wallet, "wallet set");
        vm.prank(owner);
        identity.unsetAgentWallet(id);
        assertEq(identity.getAgentWallet(id), address(0), "wallet unset");
    }

    function test_expiredWalletProofIsRejected() public {
        vm.prank(owner);
        uint256 id = identity.register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _walletProof(walletKey, id, wallet, owner, deadline);
        vm.warp(deadline + 1);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IdentityRegistry.DeadlineExpired.selector, deadline, deadline + 1));
        identity.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_walletProofTooFarAheadIsRejected() public {
        vm.prank(owner);
        uint256 id = identity.register();
        uint256 deadline = block.timestamp + 6 minutes;
        bytes memory sig = _walletProof(walletKey, id, wallet, owner, deadline);
        vm.prank(owner);
        vm.expectRevert(
            abi.encodeWithSelector(IdentityRegistry.DeadlineTooFar.selector, deadline, block.timestamp + 5 minutes)
        );
        identity.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_forgedWalletProofIsRejected() public {
        vm.prank(owner);
        uint256 id = identity.register();
        uint256 deadline = block.timestamp + 60;
        // Signed by someone other than the wallet.
        bytes memory forged = _walletProof(0xF00D, id, wallet, owner, deadline);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IdentityRegistry.InvalidWalletSignature.selector, id, wallet));
        identity.setAgentWallet(id, wallet, deadline, forged);
        // Signed by the wallet, but for another agent.
        bytes memory otherAgent = _walletProof(walletKey, id + 1, wallet, owner, deadline);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IdentityRegistry.InvalidWalletSignature.selector, id, wallet));
        identity.setAgentWallet(id, wallet, deadline, otherAgent);
    }

    function test_transferClearsWalletBeforeTransferEvent() public {
        vm.prank(owner);
        uint256 id = identity.register();
        vm.recordLogs();
        vm.prank(owner);
        identity.transferFrom(owner, stranger, id);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs[0].topics[0], METADATA_SET, "wallet cleared first");
        (, bytes memory value) = abi.decode(logs[0].data, (string, bytes));
        assertEq(value.length, 0, "cleared to empty");
        assertEq(logs[1].topics[0], TRANSFER, "then Transfer");
        assertEq(identity.getAgentWallet(id), address(0), "no wallet after transfer");
        assertEq(identity.ownerOf(id), stranger, "new owner");
    }

    function _walletProof(uint256 key, uint256 agentId, address newWallet, address agentOwner, uint256 deadline)
        private
        view
        returns (bytes memory)
    {
        bytes32 structHash =
            keccak256(abi.encode(identity.AGENT_WALLET_SET_TYPEHASH(), agentId, newWallet, agentOwner, deadline));
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("ERC8004IdentityRegistry"),
                keccak256("1"),
                block.chainid,
                address(identity)
            )
        );
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, keccak256(abi.encodePacked("\x19\x01", domain, structHash)));
        return abi.encodePacked(r, s, v);
    }
}
