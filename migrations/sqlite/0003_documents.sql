-- Documents the chain points at (registration files, Agent Cards) and what agents they describe.
-- None of this is a chain fact: documents are keyed by URI and survive reorgs; the agent tables
-- below are recomputed from the agents table and the documents whenever either changes.

-- One row per document and the way it is read: `registration` (an ERC-8004 agent URI), `card`
-- (a card URI anchored in an agent contract), `any` (a registry's metadata URI, read as what it
-- looks like), `a2a` (a registration file's A2A service endpoint: the card URL itself, or a
-- base URL tried as /.well-known/agent-card.json, then /.well-known/agent.json) or `onchain` (an
-- agent contract's agentCard() JSON, read with eth_call; the URI is eip155:{chain}:{contract}).
CREATE TABLE documents (
    uri           TEXT    NOT NULL,
    expect        TEXT    NOT NULL,
    status        TEXT    NOT NULL,             -- ok | invalid | failed
    source        TEXT,                         -- the URL it came from after redirects, or data:
    bytes         BLOB,
    hash          TEXT,                         -- keccak256 of bytes
    etag          TEXT,
    last_modified TEXT,
    kind          TEXT,                         -- card | registration, once read
    projection    TEXT,                         -- JSON
    signature     TEXT,                         -- cards: unsigned | valid | invalid | key_unavailable | unsupported
    error         TEXT,                         -- the first error, when any
    failures      INTEGER NOT NULL DEFAULT 0,   -- failed attempts in a row
    fetched_at    INTEGER NOT NULL,             -- unix seconds
    next_fetch_at INTEGER NOT NULL,
    PRIMARY KEY (uri, expect)
);
CREATE INDEX documents_due ON documents (next_fetch_at);

-- The validation report of each document.
CREATE TABLE document_lints (
    uri      TEXT NOT NULL,
    expect   TEXT NOT NULL,
    code     TEXT NOT NULL,
    severity TEXT NOT NULL,                     -- error | warning | info
    message  TEXT NOT NULL,
    path     TEXT NOT NULL
);
CREATE INDEX document_lints_document ON document_lints (uri, expect);
CREATE INDEX document_lints_code ON document_lints (code);

-- Which documents describe which agent.
CREATE TABLE agent_documents (
    agent_key TEXT NOT NULL,
    role      TEXT NOT NULL,                    -- registration | card | metadata | domain | onchain
    uri       TEXT NOT NULL,
    expect    TEXT NOT NULL,
    PRIMARY KEY (agent_key, role, uri, expect)
);
CREATE INDEX agent_documents_document ON agent_documents (uri, expect);

-- What discovery shows of an agent: the registration file first, then the card, then the chain.
CREATE TABLE agent_profiles (
    agent_key        TEXT PRIMARY KEY,
    name             TEXT,
    description      TEXT,
    card_uri         TEXT,
    card_status      TEXT,                      -- ok | invalid | failed | pending | hash_mismatch | none
    card_signature   TEXT,                      -- the card's signature status
    registration_verified INTEGER,              -- ERC-8004: the registration file's registrations name this agent
    domain_verified  INTEGER,                   -- ERC-8004: /.well-known/agent-registration.json on the A2A endpoint's origin names it
    protocol_version TEXT,
    x402             INTEGER NOT NULL,
    input_modes      TEXT NOT NULL,             -- JSON array
    output_modes     TEXT NOT NULL,             -- JSON array
    payments         TEXT NOT NULL,             -- JSON array of declared terms
    chain_block      INTEGER NOT NULL           -- agents.last_event_block it was computed from
);

CREATE TABLE agent_skills (
    agent_key   TEXT NOT NULL,
    skill_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT,
    tags        TEXT NOT NULL,                  -- JSON array, lower case
    PRIMARY KEY (agent_key, skill_id)
);

-- Full-text search over names, descriptions, skill names, descriptions and tags.
CREATE VIRTUAL TABLE agent_search USING fts5(
    agent_key UNINDEXED,
    name,
    description,
    skills,
    tags,
    tokenize = 'unicode61 remove_diacritics 2'
);
