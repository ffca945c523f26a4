// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @title X402Permit2Proxy
/// @notice A stand-in for the x402 Permit2 proxies (`x402ExactPermit2Proxy`,
///         `x402UptoPermit2Proxy`) with the same events: a facilitator's call moves the payer's
///         tokens straight to the payee (one ERC-20 `Transfer` from the payer) and the proxy then
///         emits the argument-less `Settled()` or `SettledWithPermit()` in the same transaction.
///         The real proxies draw through Permit2 against the payer's signed witness; here the
///         payer approves this contract instead, which leaves the logs an indexer reads the same.
contract X402Permit2Proxy {
    using SafeERC20 for IERC20;

    /// @notice Whether the facilitator may settle less than permitted (`upto`) or not (`exact`).
    bool public immutable upto;

    event Settled();
    event SettledWithPermit();

    error InvalidAmount();
    error AmountExceedsPermitted(uint256 amount, uint256 permitted);

    constructor(bool upto_) {
        upto = upto_;
    }

    /// @notice Settles a payment of `amount` (of at most `permitted`) from `owner` to `to`.
    function settle(address token, address owner, address to, uint256 permitted, uint256 amount) external {
        _settle(token, owner, to, permitted, amount);
        emit Settled();
    }

    /// @notice As `settle`, for the flow that also submits an EIP-2612 permit.
    function settleWithPermit(address token, address owner, address to, uint256 permitted, uint256 amount)
        external
    {
        _settle(token, owner, to, permitted, amount);
        emit SettledWithPermit();
    }

    function _settle(address token, address owner, address to, uint256 permitted, uint256 amount) private {
        if (amount == 0) revert InvalidAmount();
        if (amount > permitted || (!upto && amount != permitted)) {
            revert AmountExceedsPermitted(amount, permitted);
        }
        IERC20(token).safeTransferFrom(owner, to, amount);
    }
}
