//! Facts of the ERC-8004 Reputation and Validation registries, one table per event. See [`super`]
//! for what a declaration holds.

super::tables! {
    /// ERC-8004 Reputation Registry `NewFeedback` events: one client's feedback on an agent.
    feedback [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        client: String,
        /// NULL for legacy shapes that carried none
        feedback_index: Option<i64>,
        /// signed decimal integer
        value: String,
        value_decimals: i64,
        tag1: String,
        tag2: String,
        endpoint: String,
        feedback_uri: String,
        feedback_hash: String,
        /// which event signature it came from
        shape: String,
        block_number: i64,
        log_index: i64,
        tx_hash: String,
        timestamp: i64,
    }

    /// ERC-8004 Reputation Registry `FeedbackRevoked` events.
    feedback_revocations [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        client: String,
        feedback_index: i64,
        block_number: i64,
        log_index: i64,
    }

    /// ERC-8004 Reputation Registry `ResponseAppended` events: a response to one feedback.
    feedback_responses [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        client: String,
        feedback_index: i64,
        responder: String,
        response_uri: String,
        response_hash: String,
        block_number: i64,
        log_index: i64,
    }

    /// ERC-8004 Validation Registry `ValidationRequest` events.
    validation_requests [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        request_hash: String,
        validator: String,
        token_id: String,
        request_uri: String,
        block_number: i64,
        log_index: i64,
        tx_hash: String,
    }

    /// ERC-8004 Validation Registry `ValidationResponse` events.
    validation_responses [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        request_hash: String,
        validator: String,
        token_id: String,
        response: i64,
        response_uri: String,
        response_hash: String,
        tag: String,
        shape: String,
        block_number: i64,
        log_index: i64,
        tx_hash: String,
        timestamp: i64,
    }
}
