-- Subscription replays (`sinceBlock`) page through each kind of change in chain order, each
-- page starting after the last row of the one before (api/src/read/changes.rs). Payments are
-- stored in that order (their primary key); these indexes give agents and rescored reputation
-- the same, so a page is one short range scan however far into the replay it is. Without them
-- every page of reputation read and sorted the whole table (68 ms a page at 100,000 agents, so
-- a replay cost grew with the square of the agents).
DROP INDEX agents_chain;
CREATE INDEX agents_chain ON agents (chain_id, last_event_block, agent_key);
CREATE INDEX agent_reputation_chain_block ON agent_reputation (chain_id, as_of_block, agent_key);
