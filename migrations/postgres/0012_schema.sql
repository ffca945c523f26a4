-- agentindex schema for PostgreSQL: the schema SQLite reaches after its migrations 0001-0012
-- (migrations/sqlite/), in one step. Versions are shared: the next change to the schema is
-- migration 0013 in both folders.
--
-- The tables, columns and keys are SQLite's, with PostgreSQL's types: INTEGER is BIGINT (flags
-- included, 0 or 1, as SQLite stores them), REAL is DOUBLE PRECISION, BLOB is BYTEA, and text
-- compares byte by byte (COLLATE "C") as SQLite's does, so keys sort and page alike on both.
-- What SQLite does with FTS5 and a trigger, PostgreSQL does with its own machinery (at the end):
-- `agent_search` keeps a weighted tsvector with a GIN index, `agent_registration_text` trigram
-- GIN indexes (pg_trgm), and `agent_terms` follows `agent_skills` through a trigger function.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE chain_cursor (
    chain_id        BIGINT PRIMARY KEY,
    name            TEXT COLLATE "C"    NOT NULL,
    indexed_block   BIGINT NOT NULL,
    indexed_hash    TEXT COLLATE "C",
    finalized_block BIGINT NOT NULL DEFAULT 0,
    head_block      BIGINT NOT NULL DEFAULT 0,
    settled_block   BIGINT NOT NULL DEFAULT -1
);
CREATE TABLE block_window (
    chain_id    BIGINT NOT NULL,
    number      BIGINT NOT NULL,
    hash        TEXT COLLATE "C"    NOT NULL,
    parent_hash TEXT COLLATE "C"    NOT NULL,
    timestamp   BIGINT NOT NULL,
    PRIMARY KEY (chain_id, number)
);
CREATE TABLE watched_agents (
    chain_id      BIGINT NOT NULL,
    address       TEXT COLLATE "C"    NOT NULL,
    from_block    BIGINT NOT NULL,
    discovered_by TEXT COLLATE "C"    NOT NULL,     -- factory | registry
    via           TEXT COLLATE "C"    NOT NULL,     -- the factory or registry address
    block_number  BIGINT NOT NULL,
    log_index     BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX watched_agents_address ON watched_agents (chain_id, address, from_block);
CREATE TABLE payment_bindings (
    chain_id     BIGINT NOT NULL,
    agent_key    TEXT COLLATE "C"    NOT NULL,
    address      TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
);
CREATE INDEX payment_bindings_address ON payment_bindings (chain_id, address, block_number);
CREATE INDEX payment_bindings_agent ON payment_bindings (agent_key, block_number, log_index);
CREATE TABLE identity_registrations (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C"    NOT NULL,
    owner        TEXT COLLATE "C"    NOT NULL,
    uri          TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    tx_hash      TEXT COLLATE "C"    NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX identity_registrations_token ON identity_registrations (chain_id, registry, token_id);
CREATE TABLE identity_transfers (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C"    NOT NULL,
    from_address TEXT COLLATE "C"    NOT NULL,
    to_address   TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX identity_transfers_token ON identity_transfers (chain_id, registry, token_id);
CREATE TABLE identity_uri_updates (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C"    NOT NULL,
    uri          TEXT COLLATE "C"    NOT NULL,
    updated_by   TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX identity_uri_updates_token ON identity_uri_updates (chain_id, registry, token_id);
CREATE TABLE identity_metadata (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C"    NOT NULL,
    key          TEXT COLLATE "C"    NOT NULL,
    value        BYTEA    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX identity_metadata_token ON identity_metadata (chain_id, registry, token_id, key);
CREATE TABLE identity_approvals (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    owner        TEXT COLLATE "C"    NOT NULL,
    operator     TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C",               -- NULL for ApprovalForAll
    approved     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX identity_approvals_owner ON identity_approvals (chain_id, registry, owner);
CREATE TABLE feedback (
    chain_id       BIGINT NOT NULL,
    registry       TEXT COLLATE "C"    NOT NULL,
    token_id       TEXT COLLATE "C"    NOT NULL,
    client         TEXT COLLATE "C"    NOT NULL,
    feedback_index BIGINT,           -- NULL for legacy shapes that carried none
    value          TEXT COLLATE "C"    NOT NULL,  -- signed decimal integer
    value_decimals BIGINT NOT NULL,
    tag1           TEXT COLLATE "C"    NOT NULL,
    tag2           TEXT COLLATE "C"    NOT NULL,
    endpoint       TEXT COLLATE "C"    NOT NULL,
    feedback_uri   TEXT COLLATE "C"    NOT NULL,
    feedback_hash  TEXT COLLATE "C"    NOT NULL,
    shape          TEXT COLLATE "C"    NOT NULL,  -- which event signature it came from
    block_number   BIGINT NOT NULL,
    log_index      BIGINT NOT NULL,
    tx_hash        TEXT COLLATE "C"    NOT NULL,
    timestamp      BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX feedback_agent ON feedback (chain_id, registry, token_id, client, feedback_index);
CREATE TABLE feedback_revocations (
    chain_id       BIGINT NOT NULL,
    registry       TEXT COLLATE "C"    NOT NULL,
    token_id       TEXT COLLATE "C"    NOT NULL,
    client         TEXT COLLATE "C"    NOT NULL,
    feedback_index BIGINT NOT NULL,
    block_number   BIGINT NOT NULL,
    log_index      BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX feedback_revocations_feedback ON feedback_revocations (chain_id, registry, token_id, client, feedback_index);
CREATE TABLE feedback_responses (
    chain_id       BIGINT NOT NULL,
    registry       TEXT COLLATE "C"    NOT NULL,
    token_id       TEXT COLLATE "C"    NOT NULL,
    client         TEXT COLLATE "C"    NOT NULL,
    feedback_index BIGINT NOT NULL,
    responder      TEXT COLLATE "C"    NOT NULL,
    response_uri   TEXT COLLATE "C"    NOT NULL,
    response_hash  TEXT COLLATE "C"    NOT NULL,
    block_number   BIGINT NOT NULL,
    log_index      BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX feedback_responses_feedback ON feedback_responses (chain_id, registry, token_id, client, feedback_index);
CREATE TABLE validation_requests (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    request_hash TEXT COLLATE "C"    NOT NULL,
    validator    TEXT COLLATE "C"    NOT NULL,
    token_id     TEXT COLLATE "C"    NOT NULL,
    request_uri  TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    tx_hash      TEXT COLLATE "C"    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX validation_requests_agent ON validation_requests (chain_id, registry, token_id);
CREATE TABLE validation_responses (
    chain_id      BIGINT NOT NULL,
    registry      TEXT COLLATE "C"    NOT NULL,
    request_hash  TEXT COLLATE "C"    NOT NULL,
    validator     TEXT COLLATE "C"    NOT NULL,
    token_id      TEXT COLLATE "C"    NOT NULL,
    response      BIGINT NOT NULL,
    response_uri  TEXT COLLATE "C"    NOT NULL,
    response_hash TEXT COLLATE "C"    NOT NULL,
    tag           TEXT COLLATE "C"    NOT NULL,
    shape         TEXT COLLATE "C"    NOT NULL,
    block_number  BIGINT NOT NULL,
    log_index     BIGINT NOT NULL,
    tx_hash       TEXT COLLATE "C"    NOT NULL,
    timestamp     BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX validation_responses_agent ON validation_responses (chain_id, registry, token_id);
CREATE TABLE agent_contract_events (
    chain_id     BIGINT NOT NULL,
    agent        TEXT COLLATE "C"    NOT NULL,
    kind         TEXT COLLATE "C"    NOT NULL,
    value        TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX agent_contract_events_agent ON agent_contract_events (chain_id, agent, kind);
CREATE TABLE registry_events (
    chain_id     BIGINT NOT NULL,
    registry     TEXT COLLATE "C"    NOT NULL,
    agent        TEXT COLLATE "C"    NOT NULL,
    kind         TEXT COLLATE "C"    NOT NULL,
    actor        TEXT COLLATE "C"    NOT NULL,   -- owner or curator
    metadata_uri TEXT COLLATE "C",
    pending      BIGINT,
    reason       TEXT COLLATE "C",
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX registry_events_agent ON registry_events (chain_id, agent);
CREATE TABLE ratings (
    chain_id     BIGINT NOT NULL,
    agent        TEXT COLLATE "C"    NOT NULL,
    rater        TEXT COLLATE "C"    NOT NULL,
    score        BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX ratings_agent ON ratings (chain_id, agent);
CREATE TABLE withdrawals (
    chain_id     BIGINT NOT NULL,
    agent        TEXT COLLATE "C"    NOT NULL,
    token        TEXT COLLATE "C"    NOT NULL,
    to_address   TEXT COLLATE "C"    NOT NULL,
    amount       TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    tx_hash      TEXT COLLATE "C"    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE TABLE payments (
    chain_id     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    agent_key    TEXT COLLATE "C"    NOT NULL,
    tx_hash      TEXT COLLATE "C"    NOT NULL,
    token        TEXT COLLATE "C"    NOT NULL,   -- 0x000…000 for native coin
    payer        TEXT COLLATE "C"    NOT NULL,
    payee        TEXT COLLATE "C"    NOT NULL,
    amount       TEXT COLLATE "C"    NOT NULL,
    eip3009      BIGINT NOT NULL,
    nonce        TEXT COLLATE "C",
    timestamp    BIGINT NOT NULL,
    scheme       TEXT COLLATE "C",
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
);
CREATE INDEX payments_agent ON payments (agent_key, block_number);
CREATE TABLE agents (
    agent_key         TEXT COLLATE "C" PRIMARY KEY,  -- "{chain}:{registry}:{token id}" or "{chain}:{contract}"
    chain_id          BIGINT NOT NULL,
    source            TEXT COLLATE "C"    NOT NULL,  -- factory | registry | erc8004
    address           TEXT COLLATE "C",              -- the agent contract
    registry          TEXT COLLATE "C",              -- identity registry, factory or registry that found it
    token_id          TEXT COLLATE "C",
    owner             TEXT COLLATE "C"    NOT NULL,
    operators         TEXT COLLATE "C"    NOT NULL,  -- JSON array
    uri               TEXT COLLATE "C",              -- ERC-8004 agent URI or registry metadata URI
    agent_wallet      TEXT COLLATE "C",
    payment_address   TEXT COLLATE "C",
    card              TEXT COLLATE "C",              -- the agent contract's on-chain card, JSON
    card_uri          TEXT COLLATE "C",
    card_hash         TEXT COLLATE "C",
    name              TEXT COLLATE "C",
    description       TEXT COLLATE "C",
    active            BIGINT NOT NULL,
    heartbeat_interval BIGINT,
    last_heartbeat    BIGINT,
    registry_status   TEXT COLLATE "C",              -- JSON object: registry address -> status
    registered_block  BIGINT NOT NULL,
    registered_at     BIGINT NOT NULL,
    last_event_block  BIGINT NOT NULL
);
CREATE INDEX agents_chain ON agents (chain_id, last_event_block);
CREATE INDEX agents_owner ON agents (owner);
CREATE TABLE agent_snapshots (
    chain_id           BIGINT NOT NULL,
    agent              TEXT COLLATE "C"    NOT NULL,
    owner              TEXT COLLATE "C",              -- NULL when the call failed
    card               TEXT COLLATE "C",              -- card fields as JSON, as CardUpdated stores them
    active             BIGINT,
    heartbeat_interval BIGINT,
    last_heartbeat     BIGINT,
    errors             TEXT COLLATE "C",              -- JSON array of the calls that failed and why
    block_number       BIGINT NOT NULL,
    log_index          BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX agent_snapshots_agent ON agent_snapshots (chain_id, agent);
CREATE TABLE documents (
    uri           TEXT COLLATE "C"    NOT NULL,
    expect        TEXT COLLATE "C"    NOT NULL,
    status        TEXT COLLATE "C"    NOT NULL,             -- ok | invalid | failed
    source        TEXT COLLATE "C",                         -- the URL it came from after redirects, or data:
    bytes         BYTEA,
    hash          TEXT COLLATE "C",                         -- keccak256 of bytes
    etag          TEXT COLLATE "C",
    last_modified TEXT COLLATE "C",
    kind          TEXT COLLATE "C",                         -- card | registration, once read
    projection    TEXT COLLATE "C",                         -- JSON
    signature     TEXT COLLATE "C",                         -- cards: unsigned | valid | invalid | key_unavailable | unsupported
    error         TEXT COLLATE "C",                         -- the first error, when any
    failures      BIGINT NOT NULL DEFAULT 0,   -- failed attempts in a row
    fetched_at    BIGINT NOT NULL,             -- unix seconds
    next_fetch_at BIGINT NOT NULL,
    PRIMARY KEY (uri, expect)
);
CREATE INDEX documents_due ON documents (next_fetch_at);
CREATE TABLE document_lints (
    uri      TEXT COLLATE "C" NOT NULL,
    expect   TEXT COLLATE "C" NOT NULL,
    code     TEXT COLLATE "C" NOT NULL,
    severity TEXT COLLATE "C" NOT NULL,                     -- error | warning | info
    message  TEXT COLLATE "C" NOT NULL,
    path     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX document_lints_document ON document_lints (uri, expect);
CREATE INDEX document_lints_code ON document_lints (code);
CREATE TABLE agent_documents (
    agent_key TEXT COLLATE "C" NOT NULL,
    role      TEXT COLLATE "C" NOT NULL,                    -- registration | card | metadata | domain | onchain
    uri       TEXT COLLATE "C" NOT NULL,
    expect    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (agent_key, role, uri, expect)
);
CREATE INDEX agent_documents_document ON agent_documents (uri, expect);
CREATE TABLE agent_profiles (
    agent_key        TEXT COLLATE "C" PRIMARY KEY,
    name             TEXT COLLATE "C",
    description      TEXT COLLATE "C",
    card_uri         TEXT COLLATE "C",
    card_status      TEXT COLLATE "C",                      -- ok | invalid | failed | pending | hash_mismatch | none
    card_signature   TEXT COLLATE "C",                      -- the card's signature status
    registration_verified BIGINT,              -- ERC-8004: the registration file's registrations name this agent
    domain_verified  BIGINT,                   -- ERC-8004: /.well-known/agent-registration.json on the A2A endpoint's origin names it
    protocol_version TEXT COLLATE "C",
    x402             BIGINT NOT NULL,
    input_modes      TEXT COLLATE "C" NOT NULL,             -- JSON array
    output_modes     TEXT COLLATE "C" NOT NULL,             -- JSON array
    payments         TEXT COLLATE "C" NOT NULL,             -- JSON array of declared terms
    chain_block      BIGINT NOT NULL,          -- agents.last_event_block it was computed from
    document_digest  TEXT COLLATE "C",
    document_seq     BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE agent_skills (
    agent_key   TEXT COLLATE "C" NOT NULL,
    skill_id    TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C",
    tags        TEXT COLLATE "C" NOT NULL,                  -- JSON array, lower case
    PRIMARY KEY (agent_key, skill_id)
);
CREATE TABLE agent_reputation (
    agent_key          TEXT COLLATE "C" PRIMARY KEY,
    chain_id           BIGINT NOT NULL,
    as_of_block        BIGINT NOT NULL,
    as_of_timestamp    BIGINT NOT NULL,
    score              DOUBLE PRECISION    NOT NULL,   -- composite, 0 when no component has data
    payment_score      DOUBLE PRECISION    NOT NULL,
    payment_count      BIGINT NOT NULL,   -- payments that count
    unique_payers      BIGINT NOT NULL,
    excluded_payments  BIGINT NOT NULL,
    feedback_count     BIGINT NOT NULL,   -- unrevoked
    feedback_average   DOUBLE PRECISION,
    validation_average DOUBLE PRECISION,
    rating_average     DOUBLE PRECISION,
    evaluation         TEXT COLLATE "C"    NOT NULL    -- JSON: every component and feature, as the feed shows it
);
CREATE INDEX agent_reputation_score ON agent_reputation (score DESC, agent_key);
CREATE TABLE reputation_rules (
    chain_id BIGINT PRIMARY KEY,
    rules    TEXT COLLATE "C"    NOT NULL
);
CREATE INDEX identity_approvals_token ON identity_approvals (chain_id, registry, token_id);
CREATE INDEX withdrawals_agent ON withdrawals (chain_id, agent);
CREATE TABLE reputation_dirty (
    chain_id  BIGINT NOT NULL,
    agent_key TEXT COLLATE "C"    NOT NULL,
    PRIMARY KEY (chain_id, agent_key)
);
CREATE TABLE outflows (
    chain_id     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    agent_key    TEXT COLLATE "C"    NOT NULL,
    token        TEXT COLLATE "C"    NOT NULL,
    to_address   TEXT COLLATE "C"    NOT NULL,
    amount       TEXT COLLATE "C"    NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
);
CREATE INDEX outflows_agent ON outflows (agent_key, block_number);
CREATE TABLE agent_terms (
    term      TEXT COLLATE "C" NOT NULL,
    kind      TEXT COLLATE "C" NOT NULL,   -- skill | tag
    agent_key TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (term, kind, agent_key)
);
CREATE INDEX agent_terms_agent ON agent_terms (agent_key);
CREATE INDEX agents_newest ON agents (registered_block DESC, agent_key);
CREATE INDEX agent_profiles_document_seq ON agent_profiles (document_seq);
CREATE TABLE events (
    chain_id        BIGINT NOT NULL,
    block_number    BIGINT NOT NULL,
    log_index       BIGINT NOT NULL,
    block_hash      BYTEA    NOT NULL,   -- 32 bytes
    block_timestamp BIGINT NOT NULL,
    tx_hash         BYTEA    NOT NULL,   -- 32 bytes
    address         BYTEA    NOT NULL,   -- 20 bytes
    source          TEXT COLLATE "C"    NOT NULL,   -- factory | registry | identity | reputation | validation | agent | token
    topic0          BYTEA,               -- 32 bytes; NULL for a log without topics
    topics          BYTEA    NOT NULL,
    data            BYTEA    NOT NULL,
    kind            TEXT COLLATE "C",               -- the normalised event name when decoded
    decode_error    TEXT COLLATE "C",               -- why it was not decoded, when it was not
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX events_failed ON events (chain_id, block_number) WHERE decode_error IS NOT NULL;
CREATE TABLE counted_payments (
    chain_id     BIGINT NOT NULL,
    agent_key    TEXT COLLATE "C"    NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    payer        TEXT COLLATE "C"    NOT NULL,
    timestamp    BIGINT NOT NULL,
    PRIMARY KEY (chain_id, agent_key, block_number, log_index)
);
CREATE INDEX counted_payments_block ON counted_payments (chain_id, block_number);
CREATE TABLE trust_epochs (
    chain_id     BIGINT PRIMARY KEY,
    block_number BIGINT NOT NULL,
    timestamp    BIGINT NOT NULL,
    seeded       BIGINT NOT NULL
);
CREATE TABLE trust_agents (
    agent_key  TEXT COLLATE "C" PRIMARY KEY,
    chain_id   BIGINT NOT NULL,
    relative   DOUBLE PRECISION    NOT NULL,
    top_payers TEXT COLLATE "C"    NOT NULL
);
CREATE TABLE trust_payers (
    chain_id BIGINT NOT NULL,
    address  TEXT COLLATE "C"    NOT NULL,
    standing DOUBLE PRECISION    NOT NULL,
    PRIMARY KEY (chain_id, address)
);
CREATE TABLE x402_channels (
    chain_id     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    channel_id   TEXT COLLATE "C"    NOT NULL,
    payer        TEXT COLLATE "C"    NOT NULL,
    receiver     TEXT COLLATE "C"    NOT NULL,
    token        TEXT COLLATE "C"    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX x402_channels_id ON x402_channels (chain_id, channel_id);
CREATE INDEX agent_reputation_key_score ON agent_reputation (agent_key, score);
CREATE TABLE agent_registrations (
    agent_key        TEXT COLLATE "C" PRIMARY KEY,
    uri              TEXT COLLATE "C" NOT NULL,          -- the file's URI, as the chain gives it
    name             TEXT COLLATE "C",
    description      TEXT COLLATE "C",
    image            TEXT COLLATE "C",
    active           BIGINT,
    x402             BIGINT,
    supported_trusts TEXT COLLATE "C" NOT NULL,          -- JSON array
    services         TEXT COLLATE "C" NOT NULL,          -- JSON array, as the file lists them
    mcp_endpoint     TEXT COLLATE "C",
    mcp_version      TEXT COLLATE "C",
    a2a_endpoint     TEXT COLLATE "C",
    a2a_version      TEXT COLLATE "C",
    web_endpoint     TEXT COLLATE "C",
    email_endpoint   TEXT COLLATE "C",
    oasf_endpoint    TEXT COLLATE "C",
    oasf_version     TEXT COLLATE "C",
    oasf_skills      TEXT COLLATE "C" NOT NULL,          -- JSON array
    oasf_domains     TEXT COLLATE "C" NOT NULL,          -- JSON array
    ens              TEXT COLLATE "C",
    did              TEXT COLLATE "C"
);
CREATE INDEX agents_token ON agents (chain_id, token_id);
CREATE INDEX feedback_token ON feedback (chain_id, token_id);

-- Full-text search over agents' names, descriptions, skills and tags (SQLite: FTS5 with
-- unicode61 and diacritics removed, ranked by bm25). `document` weights the columns as the
-- ranking does: the name above skills and tags, the description last.
CREATE TABLE agent_search (
    agent_key   TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C",
    description TEXT COLLATE "C",
    skills      TEXT COLLATE "C",
    tags        TEXT COLLATE "C",
    document    tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(name, '')), 'A') ||
        setweight(to_tsvector('simple', coalesce(skills, '')), 'B') ||
        setweight(to_tsvector('simple', coalesce(tags, '')), 'B') ||
        setweight(to_tsvector('simple', coalesce(description, '')), 'C')
    ) STORED
);
CREATE INDEX agent_search_key ON agent_search (agent_key);
CREATE INDEX agent_search_document ON agent_search USING GIN (document);

-- Substring search over registration files' names and descriptions (SQLite: FTS5 trigram).
CREATE TABLE agent_registration_text (
    agent_key   TEXT COLLATE "C" NOT NULL,
    name        TEXT COLLATE "C",
    description TEXT COLLATE "C"
);
CREATE INDEX agent_registration_text_key ON agent_registration_text (agent_key);
CREATE INDEX agent_registration_text_name ON agent_registration_text USING GIN (name gin_trgm_ops);
CREATE INDEX agent_registration_text_description
    ON agent_registration_text USING GIN (description gin_trgm_ops);

-- `agent_terms` follows `agent_skills`: a skill's id and each of its tags, per agent.
CREATE FUNCTION agent_skills_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO agent_terms (term, kind, agent_key)
        VALUES (lower(NEW.skill_id), 'skill', NEW.agent_key)
        ON CONFLICT DO NOTHING;
    INSERT INTO agent_terms (term, kind, agent_key)
        SELECT t.value, 'tag', NEW.agent_key FROM jsonb_array_elements_text(NEW.tags::jsonb) t
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER agent_skills_terms_insert AFTER INSERT ON agent_skills
    FOR EACH ROW EXECUTE FUNCTION agent_skills_terms_insert();

CREATE FUNCTION agent_skills_terms_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'skill' AND term = lower(OLD.skill_id)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k
                        WHERE k.agent_key = OLD.agent_key AND lower(k.skill_id) = lower(OLD.skill_id));
    DELETE FROM agent_terms
     WHERE agent_key = OLD.agent_key AND kind = 'tag'
       AND term IN (SELECT t.value FROM jsonb_array_elements_text(OLD.tags::jsonb) t)
       AND NOT EXISTS (SELECT 1 FROM agent_skills k, jsonb_array_elements_text(k.tags::jsonb) t
                        WHERE k.agent_key = OLD.agent_key AND t.value = agent_terms.term);
    RETURN NULL;
END $$;
CREATE TRIGGER agent_skills_terms_delete AFTER DELETE ON agent_skills
    FOR EACH ROW EXECUTE FUNCTION agent_skills_terms_delete();
