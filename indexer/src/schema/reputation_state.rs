//! Derived reputation: scores, the rules they were computed under, the agents to rescore, stored
//! feeds and the trust rank. See [`super`] for what a declaration holds.

super::tables! {
    /// Each agent's stored reputation: the composite score, each component and the evaluation
    /// the feed shows.
    agent_reputation [agent_key] {
        agent_key: String,
        chain_id: i64,
        as_of_block: i64,
        as_of_timestamp: i64,
        /// composite, 0 when no component has data
        score: f64,
        payment_score: f64,
        /// payments that count
        payment_count: i64,
        unique_payers: i64,
        excluded_payments: i64,
        /// unrevoked
        feedback_count: i64,
        feedback_average: Option<f64>,
        validation_average: Option<f64>,
        rating_average: Option<f64>,
        /// JSON: every component and feature, as the feed shows it
        evaluation: String,
    }

    /// The rules each chain's stored reputation was computed under; when the config changes
    /// them every agent of the chain is rescored.
    reputation_rules [chain_id] {
        chain_id: i64,
        rules: String,
    }

    /// Agents whose facts changed since they were last scored.
    reputation_dirty [chain_id, agent_key] {
        chain_id: i64,
        agent_key: String,
    }

    /// Reputation feeds kept at epoch boundaries: their length, lines and digest.
    reputation_feeds [chain_id, block_number] {
        chain_id: i64,
        block_number: i64,
        /// lines
        agents: i64,
        /// body length, every line ending in a newline
        bytes: i64,
        /// of the body, lowercase hex
        sha256: String,
    }

    /// A stored feed's body, a run of whole lines per page, numbered from 0 in body order.
    reputation_feed_pages [chain_id, block_number, page] {
        chain_id: i64,
        block_number: i64,
        page: i64,
        lines: String,
    }

    /// Every paid agent's trust as of each stored epoch of its chain (the one or two in force),
    /// relative to the average paid agent's, with the payers that passed it most.
    trust_agents [agent_key, epoch_block] {
        agent_key: String,
        chain_id: i64,
        epoch_block: i64,
        relative: f64,
        top_payers: String,
    }

    /// Each stored trust rank of a chain: the block it is computed as of, its time, and whether
    /// any seed held trust. A chain keeps the ranks in force at its settled block (one, or two
    /// while a new one goes into force group by group).
    trust_epochs [chain_id, block_number] {
        chain_id: i64,
        block_number: i64,
        timestamp: i64,
        seeded: i64,
    }

    /// The standing (0 to 1) of every payer that has any, by epoch; a payer not listed has none.
    trust_payers [chain_id, epoch_block, address] {
        chain_id: i64,
        epoch_block: i64,
        address: String,
        standing: f64,
    }

    /// Every payer in a funding cluster as of each stored epoch: the cluster's representative
    /// (its smallest payer address), the account that funded it, how many payers it holds and
    /// the block its funding began. A payer not listed is in no cluster.
    trust_clusters [chain_id, epoch_block, address] {
        chain_id: i64,
        epoch_block: i64,
        address: String,
        representative: String,
        funder: String,
        size: i64,
        block_number: i64,
    }

    /// The block each chain's stored reputation rows were last brought to: which rank each
    /// agent's row is scored under follows from it (`reputation::rollout`).
    trust_rollout [chain_id] {
        chain_id: i64,
        applied_block: i64,
    }
}
