-- x402 Bazaar discovery (issue #34): every payment term an agent's documents declare, a row
-- each, so `GET /discovery/resources` filters by recipient, network and resource through
-- indexes. Written with the agent's profile by the documents' writer; filled here from the
-- profiles already stored.
CREATE TABLE agent_x402_terms (
    agent_key TEXT COLLATE "C" NOT NULL,
    position  BIGINT           NOT NULL,
    resource  TEXT COLLATE "C",
    source    TEXT COLLATE "C" NOT NULL,
    network   TEXT COLLATE "C",
    asset     TEXT COLLATE "C",
    amount    TEXT COLLATE "C",
    pay_to    TEXT COLLATE "C",
    skill     TEXT COLLATE "C",
    PRIMARY KEY (agent_key, position)
);
CREATE INDEX agent_x402_terms_pay_to ON agent_x402_terms (pay_to, agent_key);
CREATE INDEX agent_x402_terms_network ON agent_x402_terms (network, agent_key);
CREATE INDEX agent_x402_terms_resource ON agent_x402_terms (resource, agent_key);

INSERT INTO agent_x402_terms (agent_key, position, resource, source, network, asset, amount, pay_to, skill)
SELECT p.agent_key, t.place - 1,
       nullif(trim(t.value ->> 'resource'), ''),
       coalesce(t.value ->> 'source', ''),
       t.value ->> 'network',
       t.value ->> 'asset',
       t.value ->> 'amount',
       CASE WHEN lower(trim(t.value ->> 'pay_to')) LIKE '0x_%'
            THEN lower(trim(t.value ->> 'pay_to'))
            ELSE trim(t.value ->> 'pay_to') END,
       t.value ->> 'skill'
FROM agent_profiles p, jsonb_array_elements(p.payments::jsonb) WITH ORDINALITY AS t(value, place)
WHERE jsonb_typeof(t.value) = 'object';
