-- x402 Bazaar discovery (issue #34): every payment term an agent's documents declare, a row
-- each (64 an agent at most), so `GET /discovery/resources` filters by recipient, network and
-- resource through indexes. Written with the agent's profile by the documents' writer
-- (`store/documents/x402_terms.rs`); filled here from the profiles already stored, kept as the
-- writer keeps them: without NUL characters or surrounding spaces, a field absent when empty or
-- longer than 200 characters, a resource only when an http(s) URL of at most 2,000.
CREATE TABLE agent_x402_terms (
    agent_key TEXT    NOT NULL,
    position  INTEGER NOT NULL,
    resource  TEXT,
    source    TEXT    NOT NULL,
    network   TEXT,
    asset     TEXT,
    amount    TEXT,
    pay_to    TEXT,
    skill     TEXT,
    PRIMARY KEY (agent_key, position)
) WITHOUT ROWID;
CREATE INDEX agent_x402_terms_pay_to ON agent_x402_terms (pay_to, agent_key);
CREATE INDEX agent_x402_terms_network ON agent_x402_terms (network, agent_key);
CREATE INDEX agent_x402_terms_resource ON agent_x402_terms (resource, agent_key);

INSERT INTO agent_x402_terms (agent_key, position, resource, source, network, asset, amount, pay_to, skill)
SELECT agent_key, position,
       CASE WHEN length(resource) <= 2000
             AND (lower(substr(resource, 1, 7)) = 'http://' OR lower(substr(resource, 1, 8)) = 'https://')
            THEN resource END,
       coalesce(CASE WHEN length(source) <= 200 THEN source END, ''),
       CASE WHEN length(network) <= 200 THEN network END,
       CASE WHEN length(asset) <= 200 THEN asset END,
       CASE WHEN length(amount) <= 200 THEN amount END,
       CASE WHEN length(pay_to) > 200 THEN NULL
            WHEN lower(pay_to) LIKE '0x_%' THEN lower(pay_to) ELSE pay_to END,
       CASE WHEN length(skill) <= 200 THEN skill END
FROM (
    SELECT p.agent_key, t.key AS position,
           nullif(trim(replace(json_extract(t.value, '$.resource'), char(0), '')), '') AS resource,
           nullif(trim(replace(json_extract(t.value, '$.source'), char(0), '')), '') AS source,
           nullif(trim(replace(json_extract(t.value, '$.network'), char(0), '')), '') AS network,
           nullif(trim(replace(json_extract(t.value, '$.asset'), char(0), '')), '') AS asset,
           nullif(trim(replace(json_extract(t.value, '$.amount'), char(0), '')), '') AS amount,
           nullif(trim(replace(json_extract(t.value, '$.pay_to'), char(0), '')), '') AS pay_to,
           nullif(trim(replace(json_extract(t.value, '$.skill'), char(0), '')), '') AS skill
    FROM agent_profiles p, json_each(p.payments) t
    WHERE json_type(t.value) = 'object' AND t.key < 64
) terms;
