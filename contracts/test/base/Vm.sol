// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The forge cheatcodes these tests use, at their fixed address. Declared here because the
///         only forge-std on npm is too old to build without ds-test.
interface Vm {
    struct Log {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function prank(address sender) external;
    function startPrank(address sender) external;
    function stopPrank() external;
    function deal(address account, uint256 balance) external;
    function warp(uint256 timestamp) external;
    function addr(uint256 privateKey) external pure returns (address);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
    function expectRevert(bytes calldata revertData) external;
    function expectRevert(bytes4 selector) external;
    function expectRevert() external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData, address emitter) external;
    function recordLogs() external;
    function getRecordedLogs() external returns (Log[] memory);
    function assertEq(uint256 left, uint256 right, string calldata err) external pure;
    function assertEq(int256 left, int256 right, string calldata err) external pure;
    function assertEq(address left, address right, string calldata err) external pure;
    function assertEq(bytes32 left, bytes32 right, string calldata err) external pure;
    function assertEq(bool left, bool right, string calldata err) external pure;
    function assertEq(string calldata left, string calldata right, string calldata err) external pure;
    function assertEq(bytes calldata left, bytes calldata right, string calldata err) external pure;
}
