-- Tags an agent declares itself, outside any skill: a Masumi registry entry's metadata `tags`
-- (issue #35). Written with the agent's profile by the documents' writer. Each is a 'tag' term
-- of `agent_terms`, as a skill's tags are, so a tag or skill filter finds the agent either way;
-- a term leaves when neither the agent's skills nor its own tags hold it any more.
CREATE TABLE agent_tags (
    agent_key TEXT NOT NULL,
    tag       TEXT NOT NULL,
    PRIMARY KEY (agent_key, tag)
) WITHOUT ROWID;

CREATE TRIGGER agent_tags_terms_insert AFTER INSERT ON agent_tags BEGIN
    INSERT OR IGNORE INTO agent_terms (term, kind, agent_key)
        VALUES (NEW.tag, 'tag', NEW.agent_key);
END;

CREATE TRIGGER agent_tags_terms_delete AFTER DELETE ON agent_tags BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag' AND term = OLD.tag
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, json_each(k.tags) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = OLD.tag);
END;

DROP TRIGGER agent_skills_terms_delete;
CREATE TRIGGER agent_skills_terms_delete AFTER DELETE ON agent_skills BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'skill' AND term = lower(OLD.skill_id)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k
                        WHERE k.agent_key = OLD.agent_key AND lower(k.skill_id) = lower(OLD.skill_id));
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag'
       AND term IN (SELECT value FROM json_each(OLD.tags))
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, json_each(k.tags) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = agent_terms.term)
       AND NOT EXISTS (SELECT 1 FROM agent_tags g
                        WHERE g.agent_key = OLD.agent_key AND g.tag = agent_terms.term);
END;

-- Masumi agents indexed before this have their profiles rebuilt at the next sync, with their tags.
UPDATE agent_profiles SET chain_block = -1
 WHERE agent_key IN (SELECT agent_key FROM masumi_agents);
