-- x402 settles through more than EIP-3009 (see docs/reputation.md, "Which payments count").

-- How x402 settled a payment: eip3009 | permit2_exact | permit2_upto | batch (a claim on a
-- batch-settlement channel, credited to the channel's payer), or NULL for a plain transfer.
ALTER TABLE payments ADD COLUMN scheme TEXT;
UPDATE payments SET scheme = 'eip3009' WHERE eip3009 = 1;

-- Channels of the x402 batch-settlement contract as they opened: who pays through each, who is
-- paid and in which token. A claim on a channel whose receiver is bound to an agent is that
-- payer paying the agent.
CREATE TABLE x402_channels (
    chain_id     INTEGER NOT NULL,
    block_number INTEGER NOT NULL,
    log_index    INTEGER NOT NULL,
    channel_id   TEXT    NOT NULL,
    payer        TEXT    NOT NULL,
    receiver     TEXT    NOT NULL,
    token        TEXT    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
) WITHOUT ROWID;
CREATE INDEX x402_channels_id ON x402_channels (chain_id, channel_id);
