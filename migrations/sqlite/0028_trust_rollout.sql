-- A new epoch's trust rank goes into force group by group (issue #36), so a chain keeps up to two
-- ranks at once: each trust table is keyed by the epoch it belongs to, and `trust_rollout` holds
-- the block the stored reputation rows were last brought to. The ranks are derived data: the
-- tables start empty, and the next start rescores every agent (the stored rows' form changed).
DROP TABLE trust_agents;
DROP TABLE trust_epochs;
DROP TABLE trust_payers;
DROP TABLE trust_clusters;

CREATE TABLE trust_agents (
    agent_key   TEXT    NOT NULL,
    chain_id    INTEGER NOT NULL,
    epoch_block INTEGER NOT NULL,
    relative    REAL    NOT NULL,
    top_payers  TEXT    NOT NULL,
    PRIMARY KEY (agent_key, epoch_block)
) WITHOUT ROWID;
CREATE INDEX trust_agents_epoch ON trust_agents (chain_id, epoch_block);

CREATE TABLE trust_epochs (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    timestamp    INTEGER NOT NULL,
    seeded       INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number)
) WITHOUT ROWID;

CREATE TABLE trust_payers (
    chain_id    INTEGER NOT NULL,
    epoch_block INTEGER NOT NULL,
    address     TEXT    NOT NULL,
    standing    REAL    NOT NULL,
    PRIMARY KEY (chain_id, epoch_block, address)
) WITHOUT ROWID;

CREATE TABLE trust_clusters (
    chain_id       INTEGER NOT NULL,
    epoch_block    INTEGER NOT NULL,
    address        TEXT    NOT NULL,
    representative TEXT    NOT NULL,
    funder         TEXT    NOT NULL,
    size           INTEGER NOT NULL,
    block_number   INTEGER NOT NULL,
    PRIMARY KEY (chain_id, epoch_block, address)
) WITHOUT ROWID;

CREATE TABLE trust_rollout (
    chain_id      INTEGER PRIMARY KEY,
    applied_block INTEGER NOT NULL
);
