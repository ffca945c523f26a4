-- An agent's feedback and validations in the orders the agent0 subgraph pages them under each
-- agent (`agents { feedback(first: 1) }`): by id, the default, and feedback by createdAt with
-- the id breaking ties. Each agent's page is read from the index in that order and stops after
-- its rows, however much feedback the agent was sent; without these every page sorted all of
-- it. A feedback's id is an expression (`chainId:agentId:client:index`), spelled exactly as
-- api/src/subgraph/catalogue/reputation.rs spells it (`FEEDBACK_ID`): a planner uses the index
-- only for the expression it was built on. Its integers are cast because PostgreSQL indexes
-- only immutable expressions, and `||` on a number is not.
CREATE INDEX feedback_agent_id ON feedback (chain_id, registry, token_id,
    (CAST(chain_id AS TEXT) || ':' || token_id || ':' || client || ':' || CAST(feedback_index AS TEXT)));
CREATE INDEX feedback_agent_time ON feedback (chain_id, registry, token_id, timestamp,
    (CAST(chain_id AS TEXT) || ':' || token_id || ':' || client || ':' || CAST(feedback_index AS TEXT)));
CREATE INDEX validation_requests_agent_id ON validation_requests (chain_id, registry, token_id, request_hash);
