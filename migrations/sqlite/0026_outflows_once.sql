-- An outflow is stored once per transfer, with the address it left, instead of once per agent
-- bound to that address (issue #36): an account that registered many agents, and so is each
-- one's payment address until it names another, stored every token it sent as many times as it
-- had agents (2.4 million rows for 138 agents in 0.9 hours of a Base-like chain). Reputation
-- now matches each outflow to the agents bound to its sender at that position when it reads
-- them, by the same rule the writer used, so every score stays as it was.
CREATE TABLE outflows_once (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    from_address TEXT    NOT NULL,
    token        TEXT    NOT NULL,
    to_address   TEXT    NOT NULL,
    amount       TEXT    NOT NULL,
    timestamp    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;

-- The sender is the address the row's agent was bound to at the transfer: its latest binding
-- at or before it, the binding the writer matched.
INSERT INTO outflows_once
    (chain_id, block_number, log_index, from_address, token, to_address, amount, timestamp)
SELECT o.chain_id, o.block_number, o.log_index,
       (SELECT b.address FROM payment_bindings b
         WHERE b.chain_id = o.chain_id AND b.agent_key = o.agent_key
           AND (b.block_number < o.block_number
                OR (b.block_number = o.block_number AND b.log_index <= o.log_index))
         ORDER BY b.block_number DESC, b.log_index DESC LIMIT 1),
       o.token, o.to_address, o.amount, o.timestamp
  FROM outflows o
 WHERE o.agent_key = (SELECT min(m.agent_key) FROM outflows m
                       WHERE m.chain_id = o.chain_id AND m.block_number = o.block_number
                         AND m.log_index = o.log_index);

DROP TABLE outflows;
ALTER TABLE outflows_once RENAME TO outflows;
CREATE INDEX outflows_sender ON outflows (chain_id, from_address, block_number);
