-- Discovery reads: every skill id (case-folded) and tag of every agent as its own row, so a
-- skill or tag filter is an index lookup rather than a scan of every agent's JSON; kept in step
-- with agent_skills by triggers. And agents newest first.
CREATE TABLE agent_terms (
    term      TEXT NOT NULL,
    kind      TEXT NOT NULL,   -- skill | tag
    agent_key TEXT NOT NULL,
    PRIMARY KEY (term, kind, agent_key)
) WITHOUT ROWID;
CREATE INDEX agent_terms_agent ON agent_terms (agent_key);

INSERT OR IGNORE INTO agent_terms (term, kind, agent_key)
    SELECT lower(skill_id), 'skill', agent_key FROM agent_skills;
INSERT OR IGNORE INTO agent_terms (term, kind, agent_key)
    SELECT t.value, 'tag', k.agent_key FROM agent_skills k, json_each(k.tags) t;

CREATE TRIGGER agent_skills_terms_insert AFTER INSERT ON agent_skills BEGIN
    INSERT OR IGNORE INTO agent_terms (term, kind, agent_key)
        VALUES (lower(NEW.skill_id), 'skill', NEW.agent_key);
    INSERT OR IGNORE INTO agent_terms (term, kind, agent_key)
        SELECT value, 'tag', NEW.agent_key FROM json_each(NEW.tags);
END;

CREATE TRIGGER agent_skills_terms_delete AFTER DELETE ON agent_skills BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'skill' AND term = lower(OLD.skill_id)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k
                        WHERE k.agent_key = OLD.agent_key AND lower(k.skill_id) = lower(OLD.skill_id));
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag'
       AND term IN (SELECT value FROM json_each(OLD.tags))
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, json_each(k.tags) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = agent_terms.term);
END;

CREATE INDEX agents_newest ON agents (registered_block DESC, agent_key);
