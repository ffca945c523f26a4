-- An agent's feedback and validation requests in the order the API pages them (newest first),
-- so `feedback(first: 20)` reads 20 index entries however much feedback the agent was sent:
-- feedback is permissionless, and without this every page sorted all of it.
CREATE INDEX feedback_agent_position
    ON feedback (chain_id, registry, token_id, block_number, log_index);
CREATE INDEX validation_requests_agent_position
    ON validation_requests (chain_id, registry, token_id, block_number, log_index);
