// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {CardData, Skill, PaymentTerms} from "./AgentCardTypes.sol";
import {AgentCardJson} from "./AgentCardJson.sol";

/// @title AgentCard
/// @notice The agent smart contract of the ledger-anchored AgentCard design: it holds an agent's
///         A2A card fields and x402 payment terms, an owner, an active flag with a heartbeat,
///         receives native coin and ERC-20 payments, lets the owner withdraw and lets payers rate it.
/// @dev Deployed directly (constructor with a non-zero owner) or as a minimal-proxy clone that the
///      factory initialises in the same transaction. Every change to the card emits `CardUpdated`
///      with the whole card, so an indexer rebuilds the state from logs alone.
contract AgentCard {
    using SafeERC20 for IERC20;

    /// @notice Marks native coin in payment and withdrawal events.
    address public constant NATIVE = address(0);
    /// @notice Highest score `rate` accepts.
    uint8 public constant MAX_SCORE = 100;

    address public owner;
    bool public active;
    uint64 public heartbeatInterval;
    uint64 public lastHeartbeat;
    bool private _initialized;
    CardData private _card;

    /// @notice Total paid through `pay` or native transfers, per payer and token.
    mapping(address payer => mapping(address token => uint256)) public paidBy;
    /// @notice Whether an address ever paid this agent (and so may rate it).
    mapping(address payer => bool) public hasPaid;
    /// @notice The latest score each payer gave.
    mapping(address rater => uint8) public ratingOf;

    event CardUpdated(CardData card);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event ActiveChanged(bool active);
    event HeartbeatIntervalChanged(uint64 interval);
    event Heartbeat(uint64 timestamp);
    event PaymentReceived(address indexed payer, address indexed token, uint256 amount);
    event Withdrawn(address indexed token, address indexed to, uint256 amount);
    event Rated(address indexed rater, uint8 score);

    error AlreadyInitialized();
    error NotOwner(address caller);
    error ZeroOwner();
    error WrongNativeAmount(uint256 sent, uint256 declared);
    error UnexpectedNativeValue(uint256 sent);
    error ZeroAmount();
    error NotAPayer(address caller);
    error ScoreTooHigh(uint8 score);
    error NativeTransferFailed(address to, uint256 amount);

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    /// @param initialOwner The owner of a directly deployed agent, or zero for the factory's
    ///        implementation, which then can never be initialised.
    constructor(address initialOwner, CardData memory card, uint64 interval) {
        if (initialOwner == address(0)) {
            _initialized = true;
        } else {
            _initialize(initialOwner, card, interval);
        }
    }

    /// @notice Sets up a clone; callable once, by whoever created it, in its creation transaction.
    function initialize(address initialOwner, CardData calldata card, uint64 interval) external {
        _initialize(initialOwner, card, interval);
    }

    // ---------------------------------------------------------------- card

    /// @notice The stored card fields.
    function card() external view returns (CardData memory) {
        return _card;
    }

    /// @notice The card as an A2A v0.3 JSON document, built on-chain.
    function agentCard() external view returns (string memory) {
        return AgentCardJson.render(_card);
    }

    /// @notice The x402 payment terms.
    function paymentTerms() external view returns (PaymentTerms memory) {
        return _card.payment;
    }

    /// @notice Replaces every card field.
    function updateCard(CardData calldata card) external onlyOwner {
        _storeCard(card);
    }

    /// @notice Points at an off-chain card and anchors the keccak256 of its bytes.
    function setCardURI(string calldata uri, bytes32 hash) external onlyOwner {
        _card.cardURI = uri;
        _card.cardHash = hash;
        emit CardUpdated(_card);
    }

    /// @notice Replaces the x402 payment terms.
    function setPaymentTerms(PaymentTerms calldata terms) external onlyOwner {
        _card.payment = terms;
        emit CardUpdated(_card);
    }

    // ---------------------------------------------------------------- liveness

    /// @notice Turns the agent on or off for discovery.
    function setActive(bool value) external onlyOwner {
        active = value;
        emit ActiveChanged(value);
    }

    /// @notice How often the owner promises a heartbeat; zero means no promise.
    function setHeartbeatInterval(uint64 interval) external onlyOwner {
        heartbeatInterval = interval;
        emit HeartbeatIntervalChanged(interval);
    }

    /// @notice Proves the operator is still there.
    function heartbeat() external onlyOwner {
        lastHeartbeat = uint64(block.timestamp);
        emit Heartbeat(lastHeartbeat);
    }

    /// @notice Active, and the last heartbeat is within the promised interval (if any).
    function isAlive() external view returns (bool) {
        if (!active) return false;
        if (heartbeatInterval == 0) return true;
        return block.timestamp <= uint256(lastHeartbeat) + heartbeatInterval;
    }

    // ---------------------------------------------------------------- ownership

    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroOwner();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // ---------------------------------------------------------------- payments

    /// @notice Plain native transfers count as payments.
    receive() external payable {
        _recordPayment(msg.sender, NATIVE, msg.value);
    }

    /// @notice Pays `amount` of `token` (pulled with transferFrom), or native coin when `token` is zero.
    function pay(address token, uint256 amount) external payable {
        if (amount == 0) revert ZeroAmount();
        if (token == NATIVE) {
            if (msg.value != amount) revert WrongNativeAmount(msg.value, amount);
        } else {
            if (msg.value != 0) revert UnexpectedNativeValue(msg.value);
            IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        }
        _recordPayment(msg.sender, token, amount);
    }

    /// @notice Sends `amount` of `token` (native when zero) held by the agent to `to`.
    function withdraw(address token, address to, uint256 amount) external onlyOwner {
        if (token == NATIVE) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert NativeTransferFailed(to, amount);
        } else {
            IERC20(token).safeTransfer(to, amount);
        }
        emit Withdrawn(token, to, amount);
    }

    /// @notice Scores the agent from 0 to 100; only addresses that have paid may, and a new score
    ///         replaces the previous one.
    function rate(uint8 score) external {
        if (!hasPaid[msg.sender]) revert NotAPayer(msg.sender);
        if (score > MAX_SCORE) revert ScoreTooHigh(score);
        ratingOf[msg.sender] = score;
        emit Rated(msg.sender, score);
    }

    // ---------------------------------------------------------------- internals

    function _initialize(address initialOwner, CardData memory card, uint64 interval) private {
        if (_initialized) revert AlreadyInitialized();
        if (initialOwner == address(0)) revert ZeroOwner();
        _initialized = true;
        owner = initialOwner;
        emit OwnershipTransferred(address(0), initialOwner);
        active = true;
        emit ActiveChanged(true);
        heartbeatInterval = interval;
        lastHeartbeat = uint64(block.timestamp);
        emit HeartbeatIntervalChanged(interval);
        _storeCard(card);
    }

    function _storeCard(CardData memory card) private {
        _card.name = card.name;
        _card.description = card.description;
        _card.url = card.url;
        _card.version = card.version;
        _card.defaultInputModes = card.defaultInputModes;
        _card.defaultOutputModes = card.defaultOutputModes;
        _card.streaming = card.streaming;
        _card.pushNotifications = card.pushNotifications;
        // Memory struct arrays cannot be copied to storage in one assignment.
        delete _card.skills;
        for (uint256 i; i < card.skills.length; ++i) {
            Skill storage s = _card.skills.push();
            s.id = card.skills[i].id;
            s.name = card.skills[i].name;
            s.description = card.skills[i].description;
            s.tags = card.skills[i].tags;
        }
        _card.payment = card.payment;
        _card.cardURI = card.cardURI;
        _card.cardHash = card.cardHash;
        emit CardUpdated(card);
    }

    function _recordPayment(address payer, address token, uint256 amount) private {
        paidBy[payer][token] += amount;
        hasPaid[payer] = true;
        emit PaymentReceived(payer, token, amount);
    }
}
