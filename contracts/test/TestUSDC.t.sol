// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "./base/Test.sol";
import {Vm} from "./base/Vm.sol";
import {TestUSDC} from "../src/token/TestUSDC.sol";

contract TestUSDCTest is Test {
    bytes32 constant TRANSFER = 0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef;
    bytes32 constant AUTHORIZATION_USED = 0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5;
    bytes32 constant AUTHORIZATION_CANCELED = 0x1cdd46ff242716cdaa72d159d339a485b3438398348d68f09d7c8c0a59353d81;

    TestUSDC usdc;
    uint256 payerKey = 0xA11CE;
    address payer;
    address payee = address(0xB0B);
    address facilitator = address(0xFAC);

    function setUp() public {
        usdc = new TestUSDC();
        payer = vm.addr(payerKey);
        usdc.mint(payer, 1_000_000);
        vm.warp(1_700_000_000);
    }

    function test_metadata() public view {
        assertEq(uint256(usdc.decimals()), 6, "six decimals");
        assertEq(usdc.name(), "USD Coin", "name");
        (, string memory name, string memory version,,,,) = usdc.eip712Domain();
        assertEq(name, "USD Coin", "domain name");
        assertEq(version, "2", "domain version");
    }

    function test_onlyMinterMints() public {
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.NotMinter.selector, payer));
        usdc.mint(payer, 1);
    }

    function test_transferWithAuthorizationEmitsUsedThenTransfer() public {
        bytes32 nonce = keccak256("n1");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 250, nonce);
        vm.recordLogs();
        vm.prank(facilitator);
        usdc.transferWithAuthorization(payer, payee, 250, 0, block.timestamp + 60, nonce, v, r, s);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 2, "two logs");
        assertEq(logs[0].topics[0], AUTHORIZATION_USED, "AuthorizationUsed first");
        assertEq(logs[0].topics[1], bytes32(uint256(uint160(payer))), "authorizer");
        assertEq(logs[0].topics[2], nonce, "nonce");
        assertEq(logs[1].topics[0], TRANSFER, "Transfer right after");
        assertEq(usdc.balanceOf(payee), 250, "payee credited");
        assertTrue(usdc.authorizationState(payer, nonce), "nonce used");
    }

    function test_bytesSignatureOverload() public {
        bytes32 nonce = keccak256("n-bytes");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 10, nonce);
        usdc.transferWithAuthorization(payer, payee, 10, 0, block.timestamp + 60, nonce, abi.encodePacked(r, s, v));
        assertEq(usdc.balanceOf(payee), 10, "payee credited");
    }

    function test_reusedNonceIsRejected() public {
        bytes32 nonce = keccak256("n2");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 100, nonce);
        usdc.transferWithAuthorization(payer, payee, 100, 0, block.timestamp + 60, nonce, v, r, s);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.AuthorizationAlreadyUsed.selector, payer, nonce));
        usdc.transferWithAuthorization(payer, payee, 100, 0, block.timestamp + 60, nonce, v, r, s);
        assertEq(usdc.balanceOf(payee), 100, "paid once");
    }

    function test_forgedOrTamperedAuthorizationIsRejected() public {
        bytes32 nonce = keccak256("n3");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 100, nonce);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.InvalidSignature.selector, payer));
        usdc.transferWithAuthorization(payer, payee, 999, 0, block.timestamp + 60, nonce, v, r, s);
    }

    function test_validityWindowIsEnforced() public {
        bytes32 nonce = keccak256("n4");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1, nonce);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.AuthorizationExpired.selector, block.timestamp));
        usdc.transferWithAuthorization(payer, payee, 1, 0, block.timestamp, nonce, v, r, s);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.AuthorizationNotYetValid.selector, block.timestamp));
        usdc.transferWithAuthorization(payer, payee, 1, block.timestamp, block.timestamp + 60, nonce, v, r, s);
    }

    function test_receiveWithAuthorizationOnlyByPayee() public {
        bytes32 nonce = keccak256("n5");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.RECEIVE_WITH_AUTHORIZATION_TYPEHASH(), payee, 5, nonce);
        vm.prank(facilitator);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.CallerNotPayee.selector, facilitator, payee));
        usdc.receiveWithAuthorization(payer, payee, 5, 0, block.timestamp + 60, nonce, v, r, s);
        vm.prank(payee);
        usdc.receiveWithAuthorization(payer, payee, 5, 0, block.timestamp + 60, nonce, v, r, s);
        assertEq(usdc.balanceOf(payee), 5, "received");
    }

    function test_cancelledAuthorizationCannotBeUsed() public {
        bytes32 nonce = keccak256("n6");
        bytes32 cancelDigest = _digest(keccak256(abi.encode(usdc.CANCEL_AUTHORIZATION_TYPEHASH(), payer, nonce)));
        (uint8 cv, bytes32 cr, bytes32 cs) = vm.sign(payerKey, cancelDigest);
        vm.recordLogs();
        usdc.cancelAuthorization(payer, nonce, cv, cr, cs);
        assertEq(vm.getRecordedLogs()[0].topics[0], AUTHORIZATION_CANCELED, "cancel event");
        (uint8 v, bytes32 r, bytes32 s) = _sign(usdc.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), payee, 1, nonce);
        vm.expectRevert(abi.encodeWithSelector(TestUSDC.AuthorizationAlreadyUsed.selector, payer, nonce));
        usdc.transferWithAuthorization(payer, payee, 1, 0, block.timestamp + 60, nonce, v, r, s);
    }

    function _sign(bytes32 typehash, address to, uint256 value, bytes32 nonce)
        private
        view
        returns (uint8, bytes32, bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(typehash, payer, to, value, 0, block.timestamp + 60, nonce));
        return vm.sign(payerKey, _digest(structHash));
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", usdc.DOMAIN_SEPARATOR(), structHash));
    }
}
