-- Tags an agent declares itself, outside any skill: a Masumi registry entry's metadata `tags`
-- (issue #35). Written with the agent's profile by the documents' writer. Each is a 'tag' term
-- of `agent_terms`, as a skill's tags are, so a tag or skill filter finds the agent either way;
-- a term leaves when neither the agent's skills nor its own tags hold it any more.
CREATE TABLE agent_tags (
    agent_key TEXT COLLATE "C" NOT NULL,
    tag       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (agent_key, tag)
);

CREATE FUNCTION agent_tags_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO agent_terms (term, kind, agent_key)
        VALUES (NEW.tag, 'tag', NEW.agent_key)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER agent_tags_terms_insert AFTER INSERT ON agent_tags
    FOR EACH ROW EXECUTE FUNCTION agent_tags_terms_insert();

CREATE FUNCTION agent_tags_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag' AND term = OLD.tag
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, jsonb_array_elements_text(k.tags::jsonb) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = OLD.tag);
    RETURN NULL;
END $$;
CREATE TRIGGER agent_tags_terms_delete AFTER DELETE ON agent_tags
    FOR EACH ROW EXECUTE FUNCTION agent_tags_terms_delete();

CREATE OR REPLACE FUNCTION agent_skills_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'skill' AND term = lower(OLD.skill_id)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k
                        WHERE k.agent_key = OLD.agent_key AND lower(k.skill_id) = lower(OLD.skill_id));
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag'
       AND term IN (SELECT t.value FROM jsonb_array_elements_text(OLD.tags::jsonb) t)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, jsonb_array_elements_text(k.tags::jsonb) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = agent_terms.term)
       AND NOT EXISTS (SELECT 1 FROM agent_tags g
                        WHERE g.agent_key = OLD.agent_key AND g.tag = agent_terms.term);
    RETURN NULL;
END $$;

-- Masumi agents indexed before this have their profiles rebuilt at the next sync, with their tags.
UPDATE agent_profiles SET chain_block = -1
 WHERE agent_key IN (SELECT agent_key FROM masumi_agents);
