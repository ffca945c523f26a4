-- agentindex schema, first version.
--
-- Two kinds of tables. Facts are one row per decoded event (or per event and agent it concerns),
-- keyed by where the event sits on the chain; a reorg deletes the facts above the common ancestor
-- and nothing else. Current state (`agents`) is a pure function of the facts, recomputed for
-- every agent a batch or a reorg touched. So a database is always what a fresh index of the same
-- canonical chain builds.
--
-- Addresses and hashes are lower-case 0x hex; token ids and amounts are decimal text (they can
-- exceed 64 bits); timestamps are block timestamps in unix seconds.

-- Progress per chain. `indexed_block` is the last block whose events are all applied; it commits
-- in the same transaction as those events.
CREATE TABLE chain_cursor (
    chain_id        INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL,
    indexed_block   INTEGER NOT NULL,
    indexed_hash    TEXT,
    finalized_block INTEGER NOT NULL DEFAULT 0,
    head_block      INTEGER NOT NULL DEFAULT 0
);

-- Hashes of the unfinalized blocks applied while following the tip: the reorg window.
CREATE TABLE block_window (
    chain_id    INTEGER NOT NULL,
    number      INTEGER NOT NULL,
    hash        TEXT    NOT NULL,
    parent_hash TEXT    NOT NULL,
    timestamp   INTEGER NOT NULL,
    PRIMARY KEY (chain_id, number)
) WITHOUT ROWID;

-- Every log fetched from a watched source, decoded or not.
CREATE TABLE events (
    chain_id        INTEGER NOT NULL,
    block_number    INTEGER NOT NULL,
    log_index       INTEGER NOT NULL,
    block_hash      TEXT    NOT NULL,
    block_timestamp INTEGER NOT NULL,
    tx_hash         TEXT    NOT NULL,
    address         TEXT    NOT NULL,
    source          TEXT    NOT NULL,   -- factory | registry | identity | reputation | validation | agent | token
    topic0          TEXT,
    topics          TEXT    NOT NULL,   -- JSON array of the remaining topics
    data            BLOB    NOT NULL,
    kind            TEXT,               -- the normalised event name when decoded
    decode_error    TEXT,               -- why it was not decoded, when it was not
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX events_failed ON events (chain_id, block_number) WHERE decode_error IS NOT NULL;

-- Agent contracts followed, from the block they became known (factory creation or enrolment).
CREATE TABLE watched_agents (
    chain_id      INTEGER NOT NULL,
    address       TEXT    NOT NULL,
    from_block    INTEGER NOT NULL,
    discovered_by TEXT    NOT NULL,     -- factory | registry
    via           TEXT    NOT NULL,     -- the factory or registry address
    block_number  INTEGER NOT NULL,
    log_index     INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX watched_agents_address ON watched_agents (chain_id, address, from_block);

-- Which address receives an agent's payments, from which block: one row per change. An empty
-- address means "none from here on".
CREATE TABLE payment_bindings (
    chain_id     INTEGER NOT NULL,
    agent_key    TEXT    NOT NULL,
    address      TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
) WITHOUT ROWID;
CREATE INDEX payment_bindings_address ON payment_bindings (chain_id, address, block_number);
CREATE INDEX payment_bindings_agent ON payment_bindings (agent_key, block_number, log_index);

-- ERC-8004 Identity Registry facts ------------------------------------------------------------

CREATE TABLE identity_registrations (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    token_id     TEXT    NOT NULL,
    owner        TEXT    NOT NULL,
    uri          TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX identity_registrations_token ON identity_registrations (chain_id, registry, token_id);

CREATE TABLE identity_transfers (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    token_id     TEXT    NOT NULL,
    from_address TEXT    NOT NULL,
    to_address   TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX identity_transfers_token ON identity_transfers (chain_id, registry, token_id);

CREATE TABLE identity_uri_updates (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    token_id     TEXT    NOT NULL,
    uri          TEXT    NOT NULL,
    updated_by   TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX identity_uri_updates_token ON identity_uri_updates (chain_id, registry, token_id);

-- Every MetadataSet, agentWallet included: the full history.
CREATE TABLE identity_metadata (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    token_id     TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    value        BLOB    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX identity_metadata_token ON identity_metadata (chain_id, registry, token_id, key);

-- ERC-721 Approval (one token) and ApprovalForAll (every token of an owner): operators.
CREATE TABLE identity_approvals (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    owner        TEXT    NOT NULL,
    operator     TEXT    NOT NULL,
    token_id     TEXT,               -- NULL for ApprovalForAll
    approved     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX identity_approvals_owner ON identity_approvals (chain_id, registry, owner);

-- ERC-8004 Reputation Registry facts ----------------------------------------------------------

CREATE TABLE feedback (
    chain_id       INTEGER NOT NULL,
    registry       TEXT    NOT NULL,
    token_id       TEXT    NOT NULL,
    client         TEXT    NOT NULL,
    feedback_index INTEGER,           -- NULL for legacy shapes that carried none
    value          TEXT    NOT NULL,  -- signed decimal integer
    value_decimals INTEGER NOT NULL,
    tag1           TEXT    NOT NULL,
    tag2           TEXT    NOT NULL,
    endpoint       TEXT    NOT NULL,
    feedback_uri   TEXT    NOT NULL,
    feedback_hash  TEXT    NOT NULL,
    shape          TEXT    NOT NULL,  -- which event signature it came from
    block_number   INTEGER NOT NULL,
    log_index      INTEGER NOT NULL,
    tx_hash        TEXT    NOT NULL,
    timestamp      INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX feedback_agent ON feedback (chain_id, registry, token_id, client, feedback_index);

CREATE TABLE feedback_revocations (
    chain_id       INTEGER NOT NULL,
    registry       TEXT    NOT NULL,
    token_id       TEXT    NOT NULL,
    client         TEXT    NOT NULL,
    feedback_index INTEGER NOT NULL,
    block_number   INTEGER NOT NULL,
    log_index      INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX feedback_revocations_feedback ON feedback_revocations (chain_id, registry, token_id, client, feedback_index);

CREATE TABLE feedback_responses (
    chain_id       INTEGER NOT NULL,
    registry       TEXT    NOT NULL,
    token_id       TEXT    NOT NULL,
    client         TEXT    NOT NULL,
    feedback_index INTEGER NOT NULL,
    responder      TEXT    NOT NULL,
    response_uri   TEXT    NOT NULL,
    response_hash  TEXT    NOT NULL,
    block_number   INTEGER NOT NULL,
    log_index      INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX feedback_responses_feedback ON feedback_responses (chain_id, registry, token_id, client, feedback_index);

-- ERC-8004 Validation Registry facts ----------------------------------------------------------

CREATE TABLE validation_requests (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    request_hash TEXT    NOT NULL,
    validator    TEXT    NOT NULL,
    token_id     TEXT    NOT NULL,
    request_uri  TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      TEXT    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX validation_requests_agent ON validation_requests (chain_id, registry, token_id);

-- Every response, not only the last; 0 is a valid "fail".
CREATE TABLE validation_responses (
    chain_id      INTEGER NOT NULL,
    registry      TEXT    NOT NULL,
    request_hash  TEXT    NOT NULL,
    validator     TEXT    NOT NULL,
    token_id      TEXT    NOT NULL,
    response      INTEGER NOT NULL,
    response_uri  TEXT    NOT NULL,
    response_hash TEXT    NOT NULL,
    tag           TEXT    NOT NULL,
    shape         TEXT    NOT NULL,
    block_number  INTEGER NOT NULL,
    log_index     INTEGER NOT NULL,
    tx_hash       TEXT    NOT NULL,
    timestamp     INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX validation_responses_agent ON validation_responses (chain_id, registry, token_id);

-- Agent contract, factory and registry facts --------------------------------------------------

-- Everything an agent contract says about itself: CardUpdated (value = card JSON),
-- OwnershipTransferred (value = new owner), ActiveChanged, HeartbeatIntervalChanged, Heartbeat.
CREATE TABLE agent_contract_events (
    chain_id     INTEGER NOT NULL,
    agent        TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    value        TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX agent_contract_events_agent ON agent_contract_events (chain_id, agent, kind);

-- Registry enrolment events: registered, approved, removed, updated, deregistered.
CREATE TABLE registry_events (
    chain_id     INTEGER NOT NULL,
    registry     TEXT    NOT NULL,
    agent        TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    actor        TEXT    NOT NULL,   -- owner or curator
    metadata_uri TEXT,
    pending      INTEGER,
    reason       TEXT,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX registry_events_agent ON registry_events (chain_id, agent);

CREATE TABLE ratings (
    chain_id     INTEGER NOT NULL,
    agent        TEXT    NOT NULL,
    rater        TEXT    NOT NULL,
    score        INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX ratings_agent ON ratings (chain_id, agent);

CREATE TABLE withdrawals (
    chain_id     INTEGER NOT NULL,
    agent        TEXT    NOT NULL,
    token        TEXT    NOT NULL,
    to_address   TEXT    NOT NULL,
    amount       TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    tx_hash      TEXT    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;

-- Payments ------------------------------------------------------------------------------------

-- A payment credited to an agent: a configured token's Transfer into an address bound to the
-- agent at that block (marked eip3009 when AuthorizationUsed of the payer comes right before it
-- in the same transaction), or native coin paid to an agent contract. One transfer into an
-- address bound to several agents credits each of them.
CREATE TABLE payments (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    agent_key    TEXT    NOT NULL,
    tx_hash      TEXT    NOT NULL,
    token        TEXT    NOT NULL,   -- 0x000…000 for native coin
    payer        TEXT    NOT NULL,
    payee        TEXT    NOT NULL,
    amount       TEXT    NOT NULL,
    eip3009      INTEGER NOT NULL,
    nonce        TEXT,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
) WITHOUT ROWID;
CREATE INDEX payments_agent ON payments (agent_key, block_number);

-- Current state -------------------------------------------------------------------------------

-- One row per agent, recomputed from the facts above whenever they change.
CREATE TABLE agents (
    agent_key         TEXT PRIMARY KEY,  -- "{chain}:{registry}:{token id}" or "{chain}:{contract}"
    chain_id          INTEGER NOT NULL,
    source            TEXT    NOT NULL,  -- factory | registry | erc8004
    address           TEXT,              -- the agent contract
    registry          TEXT,              -- identity registry, factory or registry that found it
    token_id          TEXT,
    owner             TEXT    NOT NULL,
    operators         TEXT    NOT NULL,  -- JSON array
    uri               TEXT,              -- ERC-8004 agent URI or registry metadata URI
    agent_wallet      TEXT,
    payment_address   TEXT,
    card              TEXT,              -- the agent contract's on-chain card, JSON
    card_uri          TEXT,
    card_hash         TEXT,
    name              TEXT,
    description       TEXT,
    active            INTEGER NOT NULL,
    heartbeat_interval INTEGER,
    last_heartbeat    INTEGER,
    registry_status   TEXT,              -- JSON object: registry address -> status
    registered_block  INTEGER NOT NULL,
    registered_at     INTEGER NOT NULL,
    last_event_block  INTEGER NOT NULL
);
CREATE INDEX agents_chain ON agents (chain_id, last_event_block);
CREATE INDEX agents_owner ON agents (owner);
