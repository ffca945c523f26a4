// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice What the registry needs to know of an agent contract.
interface IOwnedAgent {
    function owner() external view returns (address);
}

/// @title AgentRegistry
/// @notice Enrols existing agent contracts. Only an agent's owner may enrol, update or deregister
///         it. In permissionless mode enrolment is immediate; in curated mode it waits for a
///         curator's approval, and curators may remove listed agents.
contract AgentRegistry {
    enum Status {
        None,
        Pending,
        Active,
        Removed
    }

    struct Entry {
        Status status;
        string metadataURI;
    }

    /// @notice Whether enrolments need a curator's approval.
    bool public immutable curated;
    /// @notice May add and remove curators.
    address public admin;

    mapping(address => bool) public isCurator;
    mapping(address agent => Entry) private _entries;
    address[] private _everEnrolled;
    mapping(address => bool) private _seen;

    event AgentRegistered(address indexed agent, address indexed owner, string metadataURI, bool pending);
    event AgentApproved(address indexed agent, address indexed curator);
    event AgentRemoved(address indexed agent, address indexed curator, string reason);
    event AgentUpdated(address indexed agent, string metadataURI);
    event AgentDeregistered(address indexed agent, address indexed owner);
    event CuratorAdded(address indexed curator);
    event CuratorRemoved(address indexed curator);

    error NotAgentOwner(address agent, address caller);
    error NotAdmin(address caller);
    error NotCurator(address caller);
    error NotCuratedRegistry();
    error AlreadyEnrolled(address agent, Status status);
    error NotEnrolled(address agent);
    error NotPending(address agent, Status status);

    modifier onlyAgentOwner(address agent) {
        if (_ownerOf(agent) != msg.sender) revert NotAgentOwner(agent, msg.sender);
        _;
    }

    modifier onlyCurator() {
        if (!curated) revert NotCuratedRegistry();
        if (!isCurator[msg.sender]) revert NotCurator(msg.sender);
        _;
    }

    /// @param curated_ True for a curated registry; the deployer becomes admin and first curator.
    constructor(bool curated_) {
        curated = curated_;
        admin = msg.sender;
        if (curated_) {
            isCurator[msg.sender] = true;
            emit CuratorAdded(msg.sender);
        }
    }

    // ---------------------------------------------------------------- owners

    /// @notice Enrols `agent`; pending until approved in a curated registry. A removed agent may
    ///         ask again.
    function register(address agent, string calldata metadataURI) external onlyAgentOwner(agent) {
        Entry storage e = _entries[agent];
        if (e.status == Status.Pending || e.status == Status.Active) revert AlreadyEnrolled(agent, e.status);
        e.status = curated ? Status.Pending : Status.Active;
        e.metadataURI = metadataURI;
        if (!_seen[agent]) {
            _seen[agent] = true;
            _everEnrolled.push(agent);
        }
        emit AgentRegistered(agent, msg.sender, metadataURI, curated);
    }

    /// @notice Replaces the metadata URI of an enrolled agent.
    function update(address agent, string calldata metadataURI) external onlyAgentOwner(agent) {
        Entry storage e = _entries[agent];
        if (e.status != Status.Pending && e.status != Status.Active) revert NotEnrolled(agent);
        e.metadataURI = metadataURI;
        emit AgentUpdated(agent, metadataURI);
    }

    /// @notice Takes the agent off the registry.
    function deregister(address agent) external onlyAgentOwner(agent) {
        Entry storage e = _entries[agent];
        if (e.status != Status.Pending && e.status != Status.Active) revert NotEnrolled(agent);
        e.status = Status.None;
        e.metadataURI = "";
        emit AgentDeregistered(agent, msg.sender);
    }

    // ---------------------------------------------------------------- curators

    function approve(address agent) external onlyCurator {
        Entry storage e = _entries[agent];
        if (e.status != Status.Pending) revert NotPending(agent, e.status);
        e.status = Status.Active;
        emit AgentApproved(agent, msg.sender);
    }

    function remove(address agent, string calldata reason) external onlyCurator {
        Entry storage e = _entries[agent];
        if (e.status != Status.Pending && e.status != Status.Active) revert NotEnrolled(agent);
        e.status = Status.Removed;
        emit AgentRemoved(agent, msg.sender, reason);
    }

    function addCurator(address curator) external {
        if (msg.sender != admin) revert NotAdmin(msg.sender);
        if (!curated) revert NotCuratedRegistry();
        isCurator[curator] = true;
        emit CuratorAdded(curator);
    }

    function removeCurator(address curator) external {
        if (msg.sender != admin) revert NotAdmin(msg.sender);
        isCurator[curator] = false;
        emit CuratorRemoved(curator);
    }

    // ---------------------------------------------------------------- views

    function statusOf(address agent) external view returns (Status) {
        return _entries[agent].status;
    }

    function metadataURIOf(address agent) external view returns (string memory) {
        return _entries[agent].metadataURI;
    }

    /// @notice Every agent that was ever enrolled, in first-enrolment order.
    function enrolledCount() external view returns (uint256) {
        return _everEnrolled.length;
    }

    function enrolledAt(uint256 index) external view returns (address) {
        return _everEnrolled[index];
    }

    function _ownerOf(address agent) private view returns (address) {
        // A contract without owner() reverts here, which rejects it as an agent.
        return IOwnedAgent(agent).owner();
    }
}
