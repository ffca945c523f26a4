-- Each skill's and tag's agents in reputation order (issue #36): a page of agents with a term,
-- best reputation first, reads that term's list from its top instead of walking every agent's
-- score and probing each for the term (at 100,000 agents a page of a tag 4% of agents hold read
-- 2,911 score rows and 16,352 buffers). `score` is a copy of the agent's
-- `agent_reputation.score` (NULL while it has none), kept by the triggers below whoever writes
-- either table: the writer's stages, a reorg's undo, a rules change's rescore.
ALTER TABLE agent_terms ADD COLUMN score DOUBLE PRECISION;

UPDATE agent_terms t SET score = r.score FROM agent_reputation r WHERE r.agent_key = t.agent_key;

-- `kind` last: a skill filter reads both kinds of its term in one pass of the index.
CREATE INDEX agent_terms_score ON agent_terms (term, score DESC, agent_key, kind);

CREATE FUNCTION agent_terms_score_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.score := (SELECT r.score FROM agent_reputation r WHERE r.agent_key = NEW.agent_key);
    RETURN NEW;
END $$;
CREATE TRIGGER agent_terms_score_insert BEFORE INSERT ON agent_terms
    FOR EACH ROW EXECUTE FUNCTION agent_terms_score_insert();

CREATE FUNCTION agent_reputation_terms_score() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE agent_terms SET score = NEW.score WHERE agent_key = NEW.agent_key;
    RETURN NULL;
END $$;
CREATE TRIGGER agent_reputation_terms_insert AFTER INSERT ON agent_reputation
    FOR EACH ROW EXECUTE FUNCTION agent_reputation_terms_score();
CREATE TRIGGER agent_reputation_terms_update AFTER UPDATE OF score ON agent_reputation
    FOR EACH ROW WHEN (OLD.score IS DISTINCT FROM NEW.score)
    EXECUTE FUNCTION agent_reputation_terms_score();

CREATE FUNCTION agent_reputation_terms_unscore() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE agent_terms SET score = NULL WHERE agent_key = OLD.agent_key;
    RETURN NULL;
END $$;
CREATE TRIGGER agent_reputation_terms_delete AFTER DELETE ON agent_reputation
    FOR EACH ROW EXECUTE FUNCTION agent_reputation_terms_unscore();
