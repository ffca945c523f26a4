-- `agents_last_event` (0018) repeats the leading columns of `agents_chain` (0016: chain_id,
-- last_event_block, agent_key), which serves the activity stage's "agents whose own last
-- event is in this batch" as well; one index fewer for every agent a batch refreshes.
DROP INDEX agents_last_event;
