-- The agent0 SDK's `a2aSkills` (issue #34): for each ERC-8004 agent with a readable
-- registration file, what the file's A2A service declares, else its skills' tags, then their
-- ids. Written with the registration row by the documents' writer. The rows of agents indexed
-- before this migration are filled from their skills here (tags by skill id, then ids); a file
-- that declares `a2aSkills` itself is read for them when it is next fetched.
CREATE TABLE agent_a2a_skills (
    agent_key TEXT    NOT NULL,
    position  INTEGER NOT NULL,
    skill     TEXT    NOT NULL,
    PRIMARY KEY (agent_key, position)
) WITHOUT ROWID;
CREATE INDEX agent_a2a_skills_skill ON agent_a2a_skills (skill, agent_key);

INSERT INTO agent_a2a_skills (agent_key, position, skill)
WITH candidates AS (
    SELECT k.agent_key, t.value AS skill, 0 AS part, k.skill_id, t.key AS place
    FROM agent_skills k, json_each(k.tags) t
    WHERE k.agent_key IN (SELECT agent_key FROM agent_registrations)
    UNION ALL
    SELECT k.agent_key, k.skill_id, 1, k.skill_id, 0
    FROM agent_skills k
    WHERE k.agent_key IN (SELECT agent_key FROM agent_registrations)
), ordered AS (
    SELECT agent_key, skill,
           row_number() OVER (PARTITION BY agent_key ORDER BY part, skill_id, place) AS ordinal
    FROM candidates
), firsts AS (
    SELECT agent_key, skill, min(ordinal) AS ordinal FROM ordered GROUP BY agent_key, skill
)
SELECT agent_key, row_number() OVER (PARTITION BY agent_key ORDER BY ordinal) - 1, skill
FROM firsts;
