-- Masumi on Cardano (issue #35). Facts: the runs of each followed minting policy the follower
-- has read (one row per redeemer listed: how far down the policy's list it is), what each
-- registry transaction minted or burned, and what each transaction did to the payment
-- contract's escrows; all undone by block on a rollback like every fact table. Derived: each
-- Masumi agent's current NFT and metadata, beside its `agents` row (source 'masumi'), and each
-- escrow as its actions leave it.
CREATE TABLE cardano_script_runs (
    chain_id     INTEGER NOT NULL,
    script       TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    tx_index     INTEGER NOT NULL,
    run          INTEGER NOT NULL,
    tx_hash      BLOB    NOT NULL,
    PRIMARY KEY (chain_id, script, block_number, tx_index, run)
) WITHOUT ROWID;
CREATE INDEX cardano_script_runs_block ON cardano_script_runs (chain_id, block_number);

CREATE TABLE masumi_registry_actions (
    chain_id         INTEGER NOT NULL,
    block_number     INTEGER NOT NULL,
    tx_index         INTEGER NOT NULL,
    position         INTEGER NOT NULL,
    block_hash       BLOB    NOT NULL,
    block_timestamp  INTEGER NOT NULL,
    tx_hash          BLOB    NOT NULL,
    agent_key        TEXT    NOT NULL,
    policy_id        TEXT    NOT NULL,
    registry_version INTEGER NOT NULL,
    asset_name       TEXT    NOT NULL,
    action           TEXT    NOT NULL,
    holder           TEXT,
    metadata         TEXT,
    metadata_error   TEXT,
    PRIMARY KEY (chain_id, block_number, tx_index, position)
) WITHOUT ROWID;
CREATE INDEX masumi_registry_actions_agent
    ON masumi_registry_actions (agent_key, block_number, tx_index, position);

CREATE TABLE masumi_agents (
    agent_key          TEXT    NOT NULL PRIMARY KEY,
    unit               TEXT    NOT NULL,
    policy_id          TEXT    NOT NULL,
    asset_name         TEXT    NOT NULL,
    registry_version   INTEGER NOT NULL,
    metadata           TEXT    NOT NULL,
    raw_metadata       TEXT,
    lints              TEXT    NOT NULL,
    metadata_error     TEXT,
    deregistered_block INTEGER,
    updates            INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX masumi_agents_unit ON masumi_agents (unit);

CREATE TABLE masumi_escrow_actions (
    chain_id         INTEGER NOT NULL,
    block_number     INTEGER NOT NULL,
    tx_index         INTEGER NOT NULL,
    position         INTEGER NOT NULL,
    block_hash       BLOB    NOT NULL,
    block_timestamp  INTEGER NOT NULL,
    tx_hash          BLOB    NOT NULL,
    escrow_key       TEXT    NOT NULL,
    contract_version INTEGER NOT NULL,
    agent_key        TEXT,
    buyer            TEXT    NOT NULL,
    seller           TEXT    NOT NULL,
    unit             TEXT    NOT NULL,
    amount           TEXT    NOT NULL,
    event            TEXT    NOT NULL,
    state            TEXT,
    output_index     INTEGER,
    error            TEXT,
    PRIMARY KEY (chain_id, block_number, tx_index, position)
) WITHOUT ROWID;
CREATE INDEX masumi_escrow_actions_escrow
    ON masumi_escrow_actions (escrow_key, block_number, tx_index, position);

CREATE TABLE masumi_payments (
    escrow_key       TEXT    NOT NULL PRIMARY KEY,
    chain_id         INTEGER NOT NULL,
    agent_key        TEXT,
    contract_version INTEGER NOT NULL,
    buyer            TEXT    NOT NULL,
    seller           TEXT    NOT NULL,
    unit             TEXT    NOT NULL,
    amount           TEXT    NOT NULL,
    state            TEXT,
    outcome          TEXT,
    locked_block     INTEGER NOT NULL,
    locked_at        INTEGER NOT NULL,
    lock_tx          TEXT    NOT NULL,
    settled_block    INTEGER,
    settled_at       INTEGER
) WITHOUT ROWID;
CREATE INDEX masumi_payments_agent ON masumi_payments (agent_key, locked_block, escrow_key);
