// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @title X402BatchSettlement
/// @notice A stand-in for x402's batch-settlement contract (`x402BatchSettlement`) with the same
///         channel configuration and events: a payer deposits into a channel to one receiver; the
///         receiver's side claims what the payer's vouchers allow (`Claimed`), and a settlement
///         pays everything claimed for a receiver and token at once (`Settled`, one ERC-20
///         `Transfer` from this contract). The payers of a settlement are the depositors of the
///         channels claimed. Vouchers are not verified here: the receiver or its authorizer claims
///         directly, which leaves the logs an indexer reads the same.
contract X402BatchSettlement {
    using SafeERC20 for IERC20;

    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(address receiver => mapping(address token => uint128)) public claimable;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);

    error NotPayer(address caller);
    error NotReceiver(address caller);
    error ZeroAmount();
    error ClaimExceedsBalance(uint128 claimed, uint128 balance);

    /// @notice The id of a channel: the hash of its configuration.
    function channelId(ChannelConfig calldata config) public pure returns (bytes32) {
        return keccak256(abi.encode(config));
    }

    /// @notice The payer puts `amount` into the channel `config` describes, opening it the first time.
    function deposit(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) revert NotPayer(msg.sender);
        if (amount == 0) revert ZeroAmount();
        bytes32 id = channelId(config);
        ChannelState storage state = channels[id];
        if (state.balance == 0 && state.totalClaimed == 0) emit ChannelCreated(id, config);
        IERC20(config.token).safeTransferFrom(config.payer, address(this), amount);
        state.balance += amount;
        emit Deposited(id, msg.sender, amount, state.balance);
    }

    /// @notice The receiver's side claims `amount` more of the channel for the receiver.
    function claim(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotReceiver(msg.sender);
        if (amount == 0) revert ZeroAmount();
        bytes32 id = channelId(config);
        ChannelState storage state = channels[id];
        uint128 total = state.totalClaimed + amount;
        if (total > state.balance) revert ClaimExceedsBalance(total, state.balance);
        state.totalClaimed = total;
        claimable[config.receiver][config.token] += amount;
        emit Claimed(id, msg.sender, amount, total);
    }

    /// @notice Pays the receiver everything claimed for it in `token`.
    function settle(address receiver, address token) external {
        uint128 amount = claimable[receiver][token];
        if (amount == 0) revert ZeroAmount();
        claimable[receiver][token] = 0;
        IERC20(token).safeTransfer(receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    /// @notice The payer takes back what the receiver has not claimed.
    function refund(ChannelConfig calldata config, uint128 amount) external {
        if (msg.sender != config.payer) revert NotPayer(msg.sender);
        bytes32 id = channelId(config);
        ChannelState storage state = channels[id];
        if (state.totalClaimed + amount > state.balance) revert ClaimExceedsBalance(state.totalClaimed + amount, state.balance);
        state.balance -= amount;
        IERC20(config.token).safeTransfer(config.payer, amount);
        emit Refunded(id, msg.sender, amount);
    }
}
