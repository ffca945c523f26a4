-- Who really pays (issue #32). `funding_edges`: token transfers into payers and into the accounts
-- that funded them, shortly before the money moved on, kept with the block of the first payment
-- whose trail reaches them (`paid_block`); a rewind below that payment removes them.
CREATE TABLE funding_edges (
    chain_id     BIGINT NOT NULL,
    block_number BIGINT NOT NULL,
    log_index    BIGINT NOT NULL,
    token        TEXT COLLATE "C" NOT NULL,
    funder       TEXT COLLATE "C" NOT NULL,
    funded       TEXT COLLATE "C" NOT NULL,
    amount       TEXT COLLATE "C" NOT NULL,
    paid_block   BIGINT NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX funding_edges_paid ON funding_edges (chain_id, paid_block);

-- The funding clusters of the chain's trust epoch: each clustered payer with its cluster's
-- representative, the funder at its root, its size and the block its funding began.
CREATE TABLE trust_clusters (
    chain_id       BIGINT NOT NULL,
    address        TEXT COLLATE "C" NOT NULL,
    representative TEXT COLLATE "C" NOT NULL,
    funder         TEXT COLLATE "C" NOT NULL,
    size           BIGINT NOT NULL,
    block_number   BIGINT NOT NULL,
    PRIMARY KEY (chain_id, address)
);
