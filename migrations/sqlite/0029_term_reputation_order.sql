-- Each skill's and tag's agents in reputation order (issue #36): a page of agents with a term,
-- best reputation first, reads that term's list from its top instead of walking every agent's
-- score and probing each for the term (at 100,000 agents PostgreSQL read 2,911 score rows and
-- 16,352 buffers for a page of a tag 4% of agents hold). `score` is a copy of the agent's
-- `agent_reputation.score` (NULL while it has none), kept by the triggers below whoever writes
-- either table: the writer's stages, a reorg's undo, a rules change's rescore.
ALTER TABLE agent_terms ADD COLUMN score REAL;

UPDATE agent_terms
   SET score = (SELECT r.score FROM agent_reputation r WHERE r.agent_key = agent_terms.agent_key);

-- `kind` last: a skill filter reads both kinds of its term in one pass of the index.
CREATE INDEX agent_terms_score ON agent_terms (term, score DESC, agent_key, kind);

CREATE TRIGGER agent_terms_score_insert AFTER INSERT ON agent_terms BEGIN
    UPDATE agent_terms
       SET score = (SELECT r.score FROM agent_reputation r WHERE r.agent_key = NEW.agent_key)
     WHERE term = NEW.term AND kind = NEW.kind AND agent_key = NEW.agent_key;
END;

CREATE TRIGGER agent_reputation_terms_insert AFTER INSERT ON agent_reputation BEGIN
    UPDATE agent_terms SET score = NEW.score WHERE agent_key = NEW.agent_key;
END;

CREATE TRIGGER agent_reputation_terms_update AFTER UPDATE OF score ON agent_reputation
    WHEN OLD.score IS NOT NEW.score BEGIN
    UPDATE agent_terms SET score = NEW.score WHERE agent_key = NEW.agent_key;
END;

CREATE TRIGGER agent_reputation_terms_delete AFTER DELETE ON agent_reputation BEGIN
    UPDATE agent_terms SET score = NULL WHERE agent_key = OLD.agent_key;
END;
