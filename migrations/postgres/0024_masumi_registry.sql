-- Masumi on Cardano (issue #35). Facts: the runs of each followed minting policy the follower
-- has read (one row per redeemer listed: how far down the policy's list it is), what each
-- registry transaction minted or burned, and what each transaction did to the payment
-- contract's escrows; all undone by block on a rollback like every fact table. Derived: each
-- Masumi agent's current NFT and metadata, beside its `agents` row (source 'masumi'), and each
-- escrow as its actions leave it.
CREATE TABLE cardano_script_runs (
    chain_id     BIGINT           NOT NULL,
    script       TEXT COLLATE "C" NOT NULL,
    block_number BIGINT           NOT NULL,
    tx_index     BIGINT           NOT NULL,
    run          BIGINT           NOT NULL,
    tx_hash      BYTEA            NOT NULL,
    PRIMARY KEY (chain_id, script, block_number, tx_index, run)
);
CREATE INDEX cardano_script_runs_block ON cardano_script_runs (chain_id, block_number);

CREATE TABLE masumi_registry_actions (
    chain_id         BIGINT           NOT NULL,
    block_number     BIGINT           NOT NULL,
    tx_index         BIGINT           NOT NULL,
    position         BIGINT           NOT NULL,
    block_hash       BYTEA            NOT NULL,
    block_timestamp  BIGINT           NOT NULL,
    tx_hash          BYTEA            NOT NULL,
    agent_key        TEXT COLLATE "C" NOT NULL,
    policy_id        TEXT COLLATE "C" NOT NULL,
    registry_version BIGINT           NOT NULL,
    asset_name       TEXT COLLATE "C" NOT NULL,
    action           TEXT COLLATE "C" NOT NULL,
    holder           TEXT COLLATE "C",
    metadata         TEXT COLLATE "C",
    metadata_error   TEXT COLLATE "C",
    PRIMARY KEY (chain_id, block_number, tx_index, position)
);
CREATE INDEX masumi_registry_actions_agent
    ON masumi_registry_actions (agent_key, block_number, tx_index, position);

CREATE TABLE masumi_agents (
    agent_key          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    unit               TEXT COLLATE "C" NOT NULL,
    policy_id          TEXT COLLATE "C" NOT NULL,
    asset_name         TEXT COLLATE "C" NOT NULL,
    registry_version   BIGINT           NOT NULL,
    metadata           TEXT COLLATE "C" NOT NULL,
    raw_metadata       TEXT COLLATE "C",
    lints              TEXT COLLATE "C" NOT NULL,
    metadata_error     TEXT COLLATE "C",
    deregistered_block BIGINT,
    updates            BIGINT           NOT NULL
);
CREATE INDEX masumi_agents_unit ON masumi_agents (unit);

CREATE TABLE masumi_escrow_actions (
    chain_id         BIGINT           NOT NULL,
    block_number     BIGINT           NOT NULL,
    tx_index         BIGINT           NOT NULL,
    position         BIGINT           NOT NULL,
    block_hash       BYTEA            NOT NULL,
    block_timestamp  BIGINT           NOT NULL,
    tx_hash          BYTEA            NOT NULL,
    escrow_key       TEXT COLLATE "C" NOT NULL,
    contract_version BIGINT           NOT NULL,
    agent_key        TEXT COLLATE "C",
    buyer            TEXT COLLATE "C" NOT NULL,
    seller           TEXT COLLATE "C" NOT NULL,
    unit             TEXT COLLATE "C" NOT NULL,
    amount           TEXT COLLATE "C" NOT NULL,
    event            TEXT COLLATE "C" NOT NULL,
    state            TEXT COLLATE "C",
    output_index     BIGINT,
    error            TEXT COLLATE "C",
    PRIMARY KEY (chain_id, block_number, tx_index, position)
);
CREATE INDEX masumi_escrow_actions_escrow
    ON masumi_escrow_actions (escrow_key, block_number, tx_index, position);

CREATE TABLE masumi_payments (
    escrow_key       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    chain_id         BIGINT           NOT NULL,
    agent_key        TEXT COLLATE "C",
    contract_version BIGINT           NOT NULL,
    buyer            TEXT COLLATE "C" NOT NULL,
    seller           TEXT COLLATE "C" NOT NULL,
    unit             TEXT COLLATE "C" NOT NULL,
    amount           TEXT COLLATE "C" NOT NULL,
    state            TEXT COLLATE "C",
    outcome          TEXT COLLATE "C",
    locked_block     BIGINT           NOT NULL,
    locked_at        BIGINT           NOT NULL,
    lock_tx          TEXT COLLATE "C" NOT NULL,
    settled_block    BIGINT,
    settled_at       BIGINT
);
CREATE INDEX masumi_payments_agent ON masumi_payments (agent_key, locked_block, escrow_key);
