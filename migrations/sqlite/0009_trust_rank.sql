-- The trust rank over the payment graph (see docs/reputation.md, "Trust").

-- Each agent's counted payments as its last rescore classified them (payments that are not the
-- agent's own side's, not dust, in a configured token): the edges the trust rank runs over.
CREATE TABLE counted_payments (
    chain_id     INTEGER NOT NULL,
    agent_key    TEXT    NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    payer        TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, agent_key, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX counted_payments_block ON counted_payments (chain_id, block_number);

-- The block each chain's trust rank is computed as of (a multiple of the configured interval),
-- that block's time, and whether any seed held trust.
CREATE TABLE trust_epochs (
    chain_id     INTEGER PRIMARY KEY,
    block_number INTEGER NOT NULL,
    timestamp    INTEGER NOT NULL,
    seeded       INTEGER NOT NULL
);

-- Every paid agent's trust as of its chain's epoch: relative to the average paid agent's, and
-- the payers that passed it most (JSON).
CREATE TABLE trust_agents (
    agent_key  TEXT PRIMARY KEY,
    chain_id   INTEGER NOT NULL,
    relative   REAL    NOT NULL,
    top_payers TEXT    NOT NULL
);

-- The standing (0 to 1) of every payer that has any; a payer not listed has none.
CREATE TABLE trust_payers (
    chain_id INTEGER NOT NULL,
    address  TEXT    NOT NULL,
    standing REAL    NOT NULL,
    PRIMARY KEY (chain_id, address)
) WITHOUT ROWID;
