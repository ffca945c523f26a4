-- State an agent contract already had when a registry enrolled it. Its events before the
-- enrolment are not followed, so at each enrolment the indexer reads the contract's owner, card,
-- active flag and heartbeat with eth_call at the enrolment block (by hash) and stores them as a
-- fact at the enrolment's position; later events override them field by field.
CREATE TABLE agent_snapshots (
    chain_id           INTEGER NOT NULL,
    agent              TEXT    NOT NULL,
    owner              TEXT,              -- NULL when the call failed
    card               TEXT,              -- card fields as JSON, as CardUpdated stores them
    active             INTEGER,
    heartbeat_interval INTEGER,
    last_heartbeat     INTEGER,
    errors             TEXT,              -- JSON array of the calls that failed and why
    block_number       INTEGER NOT NULL,
    log_index          INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX agent_snapshots_agent ON agent_snapshots (chain_id, agent);
