-- What each ERC-8004 agent's registration file says, one column per field, for the agent0
-- subgraph endpoint's filters (`registrationFile_: { name_contains_nocase: … }`) to compare
-- without parsing every file's JSON. Kept with agent_profiles: rewritten whenever an agent or
-- its documents change, absent while the agent has no readable registration file. Services are
-- matched by name case-insensitively, the first with an endpoint winning, as the subgraph does.
CREATE TABLE agent_registrations (
    agent_key        TEXT PRIMARY KEY,
    uri              TEXT NOT NULL,          -- the file's URI, as the chain gives it
    name             TEXT,
    description      TEXT,
    image            TEXT,
    active           INTEGER,
    x402             INTEGER,
    supported_trusts TEXT NOT NULL,          -- JSON array
    services         TEXT NOT NULL,          -- JSON array, as the file lists them
    mcp_endpoint     TEXT,
    mcp_version      TEXT,
    a2a_endpoint     TEXT,
    a2a_version      TEXT,
    web_endpoint     TEXT,
    email_endpoint   TEXT,
    oasf_endpoint    TEXT,
    oasf_version     TEXT,
    oasf_skills      TEXT NOT NULL,          -- JSON array
    oasf_domains     TEXT NOT NULL,          -- JSON array
    ens              TEXT,
    did              TEXT
) WITHOUT ROWID;

INSERT INTO agent_registrations
SELECT l.agent_key, l.uri,
       json_extract(d.projection, '$.name'),
       json_extract(d.projection, '$.description'),
       json_extract(d.projection, '$.image'),
       json_extract(d.projection, '$.active'),
       json_extract(d.projection, '$.x402_support'),
       coalesce(json_extract(d.projection, '$.supported_trust'), '[]'),
       coalesce(json_extract(d.projection, '$.services'), '[]'),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'mcp' LIMIT 1),
       (SELECT json_extract(s.value, '$.version') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'mcp' LIMIT 1),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'a2a' LIMIT 1),
       (SELECT json_extract(s.value, '$.version') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'a2a' LIMIT 1),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'web' LIMIT 1),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'email' LIMIT 1),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'oasf' LIMIT 1),
       (SELECT json_extract(s.value, '$.version') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'oasf' LIMIT 1),
       '[]', '[]',
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'ens' LIMIT 1),
       (SELECT json_extract(s.value, '$.endpoint') FROM json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'did' LIMIT 1)
  FROM agent_documents l
  JOIN documents d ON d.uri = l.uri AND d.expect = l.expect
 WHERE l.role = 'registration' AND d.kind = 'registration' AND d.projection IS NOT NULL
 GROUP BY l.agent_key;

-- Names and descriptions by trigram, so `name_contains_nocase` finds the few agents whose name
-- holds a piece of text without reading every name. Kept with agent_registrations.
CREATE VIRTUAL TABLE agent_registration_text USING fts5(
    agent_key UNINDEXED,
    name,
    description,
    tokenize = 'trigram'
);
INSERT INTO agent_registration_text (agent_key, name, description)
    SELECT agent_key, name, description FROM agent_registrations;

-- Subgraph ids name an ERC-8004 agent by chain and token (`chainId:agentId`): find agents and
-- their feedback by those two without knowing the registry.
CREATE INDEX agents_token ON agents (chain_id, token_id);
CREATE INDEX feedback_token ON feedback (chain_id, token_id);
