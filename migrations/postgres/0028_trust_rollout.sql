-- A new epoch's trust rank goes into force group by group (issue #36), so a chain keeps up to two
-- ranks at once: each trust table is keyed by the epoch it belongs to, and `trust_rollout` holds
-- the block the stored reputation rows were last brought to. The ranks are derived data: the
-- tables start empty, and the next start rescores every agent (the stored rows' form changed).
DROP TABLE trust_agents;
DROP TABLE trust_epochs;
DROP TABLE trust_payers;
DROP TABLE trust_clusters;

CREATE TABLE trust_agents (
    agent_key   TEXT COLLATE "C" NOT NULL,
    chain_id    BIGINT NOT NULL,
    epoch_block BIGINT NOT NULL,
    relative    DOUBLE PRECISION NOT NULL,
    top_payers  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (agent_key, epoch_block)
);
CREATE INDEX trust_agents_epoch ON trust_agents (chain_id, epoch_block);

CREATE TABLE trust_epochs (
    chain_id     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    timestamp    BIGINT NOT NULL,
    seeded       BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number)
);

CREATE TABLE trust_payers (
    chain_id    BIGINT NOT NULL,
    epoch_block BIGINT NOT NULL,
    address     TEXT COLLATE "C" NOT NULL,
    standing    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (chain_id, epoch_block, address)
);

CREATE TABLE trust_clusters (
    chain_id       BIGINT NOT NULL,
    epoch_block    BIGINT NOT NULL,
    address        TEXT COLLATE "C" NOT NULL,
    representative TEXT COLLATE "C" NOT NULL,
    funder         TEXT COLLATE "C" NOT NULL,
    size           BIGINT NOT NULL,
    block_number   BIGINT NOT NULL,
    PRIMARY KEY (chain_id, epoch_block, address)
);

CREATE TABLE trust_rollout (
    chain_id      BIGINT PRIMARY KEY,
    applied_block BIGINT NOT NULL
);
