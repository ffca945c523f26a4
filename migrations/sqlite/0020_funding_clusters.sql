-- Who really pays (issue #32). `funding_edges`: token transfers into payers and into the accounts
-- that funded them, shortly before the money moved on, kept with the block of the first payment
-- whose trail reaches them (`paid_block`); a rewind below that payment removes them.
CREATE TABLE funding_edges (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    token        TEXT    NOT NULL,
    funder       TEXT    NOT NULL,
    funded       TEXT    NOT NULL,
    amount       TEXT    NOT NULL,
    paid_block   INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX funding_edges_paid ON funding_edges (chain_id, paid_block);

-- The funding clusters of the chain's trust epoch: each clustered payer with its cluster's
-- representative, the funder at its root, its size and the block its funding began.
CREATE TABLE trust_clusters (
    chain_id       INTEGER NOT NULL,
    address        TEXT    NOT NULL,
    representative TEXT    NOT NULL,
    funder         TEXT    NOT NULL,
    size           INTEGER NOT NULL,
    block_number   INTEGER NOT NULL,
    PRIMARY KEY (chain_id, address)
) WITHOUT ROWID;
