-- The copies of reputation scores in `agent_terms` (0029) kept once per statement instead of
-- once per row (issue #31). A row trigger ran a PL/pgSQL call and an UPDATE of its own for
-- every agent rescored, even with no term rows to change: in the M backfill on PostgreSQL
-- 16,200 calls, 325 ms, half of the time of the statements that write `agent_reputation`.
-- Now each statement that writes `agent_reputation` updates the term rows of all the agents
-- it wrote in one UPDATE, and only those whose copy differs. The UPDATE is run through
-- EXECUTE, so it is planned for the rows each statement wrote (one agent at the tip, hundreds
-- in a rescore) and for `agent_terms` as it is then, not once per connection.
-- SQLite keeps its row triggers (0029): they run inside the writer's process, at no such cost.
DROP TRIGGER agent_reputation_terms_insert ON agent_reputation;
DROP TRIGGER agent_reputation_terms_update ON agent_reputation;
DROP TRIGGER agent_reputation_terms_delete ON agent_reputation;
DROP FUNCTION agent_reputation_terms_score();
DROP FUNCTION agent_reputation_terms_unscore();

CREATE FUNCTION agent_reputation_terms_rescored() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'UPDATE agent_terms t SET score = w.score FROM written w '
            'WHERE t.agent_key = w.agent_key AND t.score IS DISTINCT FROM w.score';
    RETURN NULL;
END $$;
-- An `INSERT ... ON CONFLICT DO UPDATE` fires both, each with its own rows (those updated, then
-- those inserted).
CREATE TRIGGER agent_reputation_terms_insert AFTER INSERT ON agent_reputation
    REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION agent_reputation_terms_rescored();
CREATE TRIGGER agent_reputation_terms_update AFTER UPDATE ON agent_reputation
    REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION agent_reputation_terms_rescored();

CREATE FUNCTION agent_reputation_terms_unscored() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'UPDATE agent_terms t SET score = NULL FROM removed r '
            'WHERE t.agent_key = r.agent_key AND t.score IS NOT NULL';
    RETURN NULL;
END $$;
CREATE TRIGGER agent_reputation_terms_delete AFTER DELETE ON agent_reputation
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION agent_reputation_terms_unscored();
