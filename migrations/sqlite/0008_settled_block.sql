-- The block up to which a chain's stored reputation is settled: every agent with facts at or
-- below it has been rescored. During a backfill agents are only marked, and rescored by the batch
-- that reaches the head; the change feed publishes no further than this block, so a subscriber
-- hears of every agent's reputation once it is computed. A chain with marks pending when this
-- migration runs counts as settled nowhere until its next settle.
ALTER TABLE chain_cursor ADD COLUMN settled_block INTEGER NOT NULL DEFAULT -1;
UPDATE chain_cursor SET settled_block = indexed_block
 WHERE NOT EXISTS (SELECT 1 FROM reputation_dirty d WHERE d.chain_id = chain_cursor.chain_id);
