-- x402 Bazaar discovery (issue #34): every payment term an agent's documents declare, a row
-- each, so `GET /discovery/resources` filters by recipient, network and resource through
-- indexes. Written with the agent's profile by the documents' writer; filled here from the
-- profiles already stored.
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
SELECT p.agent_key, t.key,
       nullif(trim(json_extract(t.value, '$.resource')), ''),
       coalesce(json_extract(t.value, '$.source'), ''),
       json_extract(t.value, '$.network'),
       json_extract(t.value, '$.asset'),
       json_extract(t.value, '$.amount'),
       CASE WHEN lower(trim(json_extract(t.value, '$.pay_to'))) LIKE '0x_%'
            THEN lower(trim(json_extract(t.value, '$.pay_to')))
            ELSE trim(json_extract(t.value, '$.pay_to')) END,
       json_extract(t.value, '$.skill')
FROM agent_profiles p, json_each(p.payments) t
WHERE json_type(t.value) = 'object';
