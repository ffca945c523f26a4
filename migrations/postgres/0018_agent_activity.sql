-- When each agent was last active on-chain: the block of its newest fact (its own events, the
-- metadata its owner set, feedback given to it and revoked) and that block's time, as the
-- agent0 subgraph reports `updatedAt` (the registration's time when nothing followed it).
-- Kept by the writer's activity stage (indexer/src/store/stages/activity.rs) for the agents
-- each batch touches, and recomputed for those a reorg touched. The index makes "most
-- recently active first" a walk down it rather than a sort of every agent.
CREATE TABLE agent_activity (
    agent_key  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    chain_id   BIGINT  NOT NULL,
    last_block BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL
);
CREATE INDEX agent_activity_updated ON agent_activity (updated_at, agent_key);
-- A rewind finds the agents active above its ancestor.
CREATE INDEX agent_activity_chain_block ON agent_activity (chain_id, last_block);
-- A batch finds the agents whose own last event it holds.
CREATE INDEX agents_last_event ON agents (chain_id, last_event_block);
-- Every agent already indexed, from its facts (as the stage computes it).
INSERT INTO agent_activity (agent_key, chain_id, last_block, updated_at)
SELECT a.agent_key, a.chain_id,
       GREATEST(
           a.last_event_block,
           coalesce((SELECT max(m.block_number) FROM identity_metadata m WHERE m.chain_id = a.chain_id AND m.registry = a.registry AND m.token_id = a.token_id), 0),
           coalesce((SELECT max(f.block_number) FROM feedback f WHERE f.chain_id = a.chain_id AND f.registry = a.registry AND f.token_id = a.token_id), 0),
           coalesce((SELECT max(r.block_number) FROM feedback_revocations r WHERE r.chain_id = a.chain_id AND r.registry = a.registry AND r.token_id = a.token_id), 0)
       ),
       GREATEST(
           coalesce((SELECT e.block_timestamp FROM events e
                     WHERE e.chain_id = a.chain_id AND e.block_number = a.last_event_block LIMIT 1),
                    a.registered_at),
           coalesce((SELECT max(e.block_timestamp) FROM identity_metadata m
                     JOIN events e ON e.chain_id = m.chain_id AND e.block_number = m.block_number AND e.log_index = m.log_index WHERE m.chain_id = a.chain_id AND m.registry = a.registry AND m.token_id = a.token_id), 0),
           coalesce((SELECT max(f.timestamp) FROM feedback f WHERE f.chain_id = a.chain_id AND f.registry = a.registry AND f.token_id = a.token_id), 0),
           coalesce((SELECT max(e.block_timestamp) FROM feedback_revocations r
                     JOIN events e ON e.chain_id = r.chain_id AND e.block_number = r.block_number AND e.log_index = r.log_index WHERE r.chain_id = a.chain_id AND r.registry = a.registry AND r.token_id = a.token_id), 0)
       )
FROM agents a;
