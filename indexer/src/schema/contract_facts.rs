//! Facts of agent contracts: their discovery by factories and registries, what they say of
//! themselves, registries' enrolments and ratings, withdrawals, and their state at enrolment. See
//! [`super`] for what a declaration holds.

super::tables! {
    /// Agent contracts found by a factory's deployment or a registry's enrolment, followed from
    /// `from_block` on.
    watched_agents [chain_id, block_number, log_index] {
        chain_id: i64,
        address: String,
        from_block: i64,
        /// factory | registry
        discovered_by: String,
        /// the factory or registry address
        via: String,
        block_number: i64,
        log_index: i64,
    }

    /// What an agent contract says of itself: `CardUpdated` (the card JSON),
    /// `OwnershipTransferred` (the new owner), `ActiveChanged`, `HeartbeatIntervalChanged`,
    /// `Heartbeat`.
    agent_contract_events [chain_id, block_number, log_index] {
        chain_id: i64,
        agent: String,
        kind: String,
        value: String,
        block_number: i64,
        log_index: i64,
        timestamp: i64,
    }

    /// A registry's enrolment events: registered, approved, removed, updated, deregistered.
    registry_events [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        agent: String,
        kind: String,
        /// owner or curator
        actor: String,
        metadata_uri: Option<String>,
        pending: Option<i64>,
        reason: Option<String>,
        block_number: i64,
        log_index: i64,
    }

    /// Ratings given to agent contracts: a rater's score of an agent.
    ratings [chain_id, block_number, log_index] {
        chain_id: i64,
        agent: String,
        rater: String,
        score: i64,
        block_number: i64,
        log_index: i64,
        timestamp: i64,
    }

    /// Withdrawals from agent contracts: the token, its recipient and the amount.
    withdrawals [chain_id, block_number, log_index] {
        chain_id: i64,
        agent: String,
        token: String,
        to_address: String,
        amount: String,
        block_number: i64,
        log_index: i64,
        tx_hash: String,
    }

    /// The state an agent contract already had when a registry enrolled it (owner, card, active
    /// flag, heartbeat), read with `eth_call` at the enrolment block and stored as a fact at
    /// the enrolment's position.
    agent_snapshots [chain_id, block_number, log_index] {
        chain_id: i64,
        agent: String,
        /// NULL when the call failed
        owner: Option<String>,
        /// card fields as JSON, as CardUpdated stores them
        card: Option<String>,
        active: Option<i64>,
        heartbeat_interval: Option<i64>,
        last_heartbeat: Option<i64>,
        /// JSON array of the calls that failed and why
        errors: Option<String>,
        block_number: i64,
        log_index: i64,
    }
}
