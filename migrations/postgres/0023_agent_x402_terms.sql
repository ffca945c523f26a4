-- x402 Bazaar discovery (issue #34): every payment term an agent's documents declare, a row
-- each (64 an agent at most), so `GET /discovery/resources` filters by recipient, network and
-- resource through indexes. Written with the agent's profile by the documents' writer
-- (`store/documents/x402_terms.rs`); filled here from the profiles already stored, kept as the
-- writer keeps them: without NUL characters (`\u0000` escapes, which jsonb refuses, taken out
-- before the cast) or surrounding spaces, a field absent when empty or longer than 200
-- characters, a resource only when an http(s) URL of at most 2,000.
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
    SELECT p.agent_key, t.place - 1 AS position,
           nullif(trim(t.value ->> 'resource'), '') AS resource,
           nullif(trim(t.value ->> 'source'), '') AS source,
           nullif(trim(t.value ->> 'network'), '') AS network,
           nullif(trim(t.value ->> 'asset'), '') AS asset,
           nullif(trim(t.value ->> 'amount'), '') AS amount,
           nullif(trim(t.value ->> 'pay_to'), '') AS pay_to,
           nullif(trim(t.value ->> 'skill'), '') AS skill
    FROM agent_profiles p,
         jsonb_array_elements(replace(p.payments, '\u0000', '')::jsonb) WITH ORDINALITY AS t(value, place)
    WHERE jsonb_typeof(t.value) = 'object' AND t.place <= 64
) terms;
