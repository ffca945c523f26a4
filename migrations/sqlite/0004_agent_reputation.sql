-- Each agent's reputation as of the newest block among its own facts, recomputed whenever a
-- batch or a reorg changes those facts. Because the as-of block is a property of the facts (not
-- of where a batch ended), the rows equal those a fresh index of the same chain computes.
CREATE TABLE agent_reputation (
    agent_key          TEXT PRIMARY KEY,
    chain_id           INTEGER NOT NULL,
    as_of_block        INTEGER NOT NULL,
    as_of_timestamp    INTEGER NOT NULL,
    score              REAL    NOT NULL,   -- composite, 0 when no component has data
    payment_score      REAL    NOT NULL,
    payment_count      INTEGER NOT NULL,   -- payments that count
    unique_payers      INTEGER NOT NULL,
    excluded_payments  INTEGER NOT NULL,
    feedback_count     INTEGER NOT NULL,   -- unrevoked
    feedback_average   REAL,
    validation_average REAL,
    rating_average     REAL,
    evaluation         TEXT    NOT NULL    -- JSON: every component and feature, as the feed shows it
);
CREATE INDEX agent_reputation_score ON agent_reputation (score DESC, agent_key);

-- The rules each chain's stored reputation was computed under (tokens, score parameters,
-- weights); when the config changes them, every agent of the chain is rescored on start.
CREATE TABLE reputation_rules (
    chain_id INTEGER PRIMARY KEY,
    rules    TEXT    NOT NULL
);

-- Reputation reads one agent's approvals and an agent contract's withdrawals by agent.
CREATE INDEX identity_approvals_token ON identity_approvals (chain_id, registry, token_id);
CREATE INDEX withdrawals_agent ON withdrawals (chain_id, agent);

-- Agents whose facts changed since they were last scored (see store/reputation).
CREATE TABLE reputation_dirty (
    chain_id  INTEGER NOT NULL,
    agent_key TEXT    NOT NULL,
    PRIMARY KEY (chain_id, agent_key)
) WITHOUT ROWID;

-- A configured token's Transfer out of an address bound to the agent at that block: funds the
-- agent's side sent out, so a payer that received them recently counts less (circular flow).
CREATE TABLE outflows (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    agent_key    TEXT    NOT NULL,
    token        TEXT    NOT NULL,
    to_address   TEXT    NOT NULL,
    amount       TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, agent_key)
) WITHOUT ROWID;
CREATE INDEX outflows_agent ON outflows (agent_key, block_number);
