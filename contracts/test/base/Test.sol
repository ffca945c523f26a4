// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Vm} from "./Vm.sol";

/// @notice The project's own forge test base: the cheatcode handle and assertions that fail the
///         test by reverting with a message naming what differed.
abstract contract Test {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    bool public IS_TEST = true;

    function assertEq(uint256 a, uint256 b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(int256 a, int256 b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(address a, address b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(bytes32 a, bytes32 b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(bool a, bool b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(string memory a, string memory b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertEq(bytes memory a, bytes memory b, string memory what) internal pure {
        vm.assertEq(a, b, what);
    }

    function assertTrue(bool condition, string memory what) internal pure {
        vm.assertEq(condition, true, what);
    }

    /// @notice Index of the first recorded log with `topic0`, or reverts.
    function findLog(Vm.Log[] memory logs, bytes32 topic0) internal pure returns (uint256) {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics.length > 0 && logs[i].topics[0] == topic0) return i;
        }
        revert("expected log not emitted");
    }
}
