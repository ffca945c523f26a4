// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {AgentCard} from "./AgentCard.sol";
import {CardData} from "./AgentCardTypes.sol";

/// @title AgentFactory
/// @notice Creates agent contracts as minimal-proxy clones of one `AgentCard` implementation and
///         keeps the list of everything it created.
contract AgentFactory {
    /// @notice The locked implementation every child delegates to.
    address public immutable implementation;

    address[] private _children;
    mapping(address => bool) public isChild;

    event AgentCreated(address indexed agent, address indexed owner, uint256 index);

    error IndexOutOfRange(uint256 index, uint256 count);

    constructor() {
        CardData memory empty;
        implementation = address(new AgentCard(address(0), empty, 0));
    }

    /// @notice Creates an agent owned by `owner` with the given card and heartbeat interval.
    function createAgent(address owner, CardData calldata card, uint64 heartbeatInterval)
        external
        returns (address agent)
    {
        agent = Clones.clone(implementation);
        // Initialised in the creation transaction, so nobody can front-run the owner.
        AgentCard(payable(agent)).initialize(owner, card, heartbeatInterval);
        isChild[agent] = true;
        _children.push(agent);
        emit AgentCreated(agent, owner, _children.length - 1);
    }

    /// @notice How many agents this factory created.
    function childrenCount() external view returns (uint256) {
        return _children.length;
    }

    /// @notice The `index`-th agent created, in creation order.
    function childAt(uint256 index) external view returns (address) {
        if (index >= _children.length) revert IndexOutOfRange(index, _children.length);
        return _children[index];
    }

    /// @notice Up to `limit` children starting at `offset`.
    function children(uint256 offset, uint256 limit) external view returns (address[] memory page) {
        uint256 total = _children.length;
        if (offset >= total) return new address[](0);
        uint256 end = offset + limit > total ? total : offset + limit;
        page = new address[](end - offset);
        for (uint256 i = offset; i < end; ++i) {
            page[i - offset] = _children[i];
        }
    }
}
