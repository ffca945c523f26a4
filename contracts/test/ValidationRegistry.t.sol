// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {IdentityRegistry} from "../src/erc8004/IdentityRegistry.sol";
import {ValidationRegistry} from "../src/erc8004/ValidationRegistry.sol";

contract ValidationRegistryTest is Test {
    bytes32 constant VALIDATION_REQUEST = 0x530436c3634a98e1e626b0898be2f1e9980cc1bd2a78c07a0aba52d0a48a5059;
    bytes32 constant VALIDATION_RESPONSE = 0xafddf629e874ccc3963b6a888c477bd464a6c8525024fc88759ea3b2326349ae;

    IdentityRegistry identity;
    ValidationRegistry validation;
    address owner = address(0xA11CE);
    address validator = address(0x7A1);
    address stranger = address(0xBAD);
    bytes32 requestHash = keccak256("request");
    uint256 id;

    function setUp() public {
        identity = new IdentityRegistry();
        validation = new ValidationRegistry(identity);
        vm.prank(owner);
        id = identity.register("ipfs://agent");
    }

    function test_onlyOwnerOrOperatorRequests() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(ValidationRegistry.NotAuthorized.selector, id, stranger));
        validation.validationRequest(validator, id, "ipfs://req", requestHash);
    }

    function test_requestHashIsUnique() public {
        vm.startPrank(owner);
        validation.validationRequest(validator, id, "ipfs://req", requestHash);
        vm.expectRevert(abi.encodeWithSelector(ValidationRegistry.DuplicateRequest.selector, requestHash));
        validation.validationRequest(validator, id, "ipfs://req", requestHash);
        vm.stopPrank();
    }

    function test_onlyTheValidatorResponds() public {
        vm.prank(owner);
        validation.validationRequest(validator, id, "ipfs://req", requestHash);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(ValidationRegistry.NotValidator.selector, requestHash, stranger));
        validation.validationResponse(requestHash, 100, "", bytes32(0), "");
        vm.prank(validator);
        vm.expectRevert(abi.encodeWithSelector(ValidationRegistry.ResponseOutOfRange.selector, 101));
        validation.validationResponse(requestHash, 101, "", bytes32(0), "");
        vm.prank(validator);
        vm.expectRevert(abi.encodeWithSelector(ValidationRegistry.UnknownRequest.selector, bytes32("nope")));
        validation.validationResponse(bytes32("nope"), 1, "", bytes32(0), "");
    }

    function test_responsesRepeatAndZeroIsAFail() public {
        vm.recordLogs();
        vm.prank(owner);
        validation.validationRequest(validator, id, "ipfs://req", requestHash);
        vm.startPrank(validator);
        validation.validationResponse(requestHash, 0, "ipfs://fail", bytes32("f"), "zkml");
        validation.validationResponse(requestHash, 100, "ipfs://pass", bytes32("p"), "zkml");
        vm.stopPrank();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 3, "request and both responses");
        assertEq(logs[0].topics[0], VALIDATION_REQUEST, "request topic0");
        assertEq(logs[0].topics[3], requestHash, "hash indexed");
        assertEq(logs[1].topics[0], VALIDATION_RESPONSE, "response topic0");
        (uint8 first,,,) = abi.decode(logs[1].data, (uint8, string, bytes32, string));
        assertEq(uint256(first), 0, "zero kept as a response");
        (, uint256 agentId, uint8 response,, string memory tag,) = validation.getValidationStatus(requestHash);
        assertEq(agentId, id, "agent");
        assertEq(uint256(response), 100, "latest response");
        assertEq(tag, "zkml", "tag");
        (uint64 count, uint8 avg) = validation.getSummary(id, new address[](0), "");
        assertEq(uint256(count), 1, "one answered request");
        assertEq(uint256(avg), 100, "average of latest");
        assertEq(validation.getAgentValidations(id).length, 1, "listed for agent");
    }
}
