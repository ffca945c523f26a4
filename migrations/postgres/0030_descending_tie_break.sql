-- Agent lists in reputation and newest order break ties by key descending, as they order by
-- score or block (issue #36): a page after a cursor is then one index range, `(score,
-- agent_key) < (s, k)`, which both databases seek to directly. With the key ascending under a
-- descending score the condition was an OR neither could seek with, so a page read every index
-- entry above its cursor: 6.4 s on SQLite for a page 990,000 agents deep.
DROP INDEX agent_reputation_score;
CREATE INDEX agent_reputation_score ON agent_reputation (score DESC, agent_key DESC);

DROP INDEX agents_newest;
CREATE INDEX agents_newest ON agents (registered_block DESC, agent_key DESC);

-- `kind` last: a skill filter reads both kinds of its term in one pass of the index.
DROP INDEX agent_terms_score;
CREATE INDEX agent_terms_score ON agent_terms (term, score DESC, agent_key DESC, kind);
