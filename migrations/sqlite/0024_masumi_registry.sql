-- The Masumi registry on Cardano (issue #35). Facts: the runs of each followed minting policy
-- the follower has read (one row per redeemer listed: how far down the policy's list it is) and
-- what each registry transaction minted or burned; both undone by block on a rollback like
-- every fact table. Derived: each Masumi agent's current NFT and metadata, beside its `agents`
-- row (source 'masumi').
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
