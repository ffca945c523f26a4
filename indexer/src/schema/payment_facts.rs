//! Payment facts: where each agent is paid, what it was paid and sent out, x402 channels, and the
//! payments its last rescore counted. See [`super`] for what a declaration holds.

super::tables! {
    /// Which address receives an agent's payments, from which block: one row per change, an
    /// empty address meaning none from there on.
    payment_bindings [chain_id, block_number, log_index, agent_key] {
        chain_id: i64,
        agent_key: String,
        address: String,
        block_number: i64,
        log_index: i64,
    }

    /// Transfers into an address bound to an agent at that block (EIP-3009, Permit2, batch
    /// settlement and plain transfers): the payments reputation counts.
    payments [chain_id, block_number, log_index, agent_key] {
        chain_id: i64,
        block_number: i64,
        log_index: i64,
        agent_key: String,
        tx_hash: String,
        /// 0x000…000 for native coin
        token: String,
        payer: String,
        payee: String,
        amount: String,
        eip3009: i64,
        nonce: Option<String>,
        timestamp: i64,
        scheme: Option<String>,
    }

    /// Each agent's payments as its last rescore classified them (not its own side's, not dust,
    /// in a configured token): the edges the trust rank runs over.
    counted_payments [chain_id, agent_key, block_number, log_index] {
        chain_id: i64,
        agent_key: String,
        block_number: i64,
        log_index: i64,
        payer: String,
        timestamp: i64,
    }

    /// A configured token's transfers out of an address bound to at least one agent at that
    /// position, once each whatever the number of agents: funds an agent's side sent out, so a
    /// payer that got them back recently counts less. Which agents they are is read with them
    /// (the agents bound to `from_address` at the transfer, `crediting::bound_at`).
    outflows [chain_id, block_number, log_index] {
        chain_id: i64,
        block_number: i64,
        log_index: i64,
        from_address: String,
        token: String,
        to_address: String,
        amount: String,
        timestamp: i64,
    }

    /// Transfers of a payment token into a payer, or into an account that funded one, in the
    /// blocks before the money moved on (the trail `reputation::funding_trail` follows), with
    /// the first payment whose trail reaches it: a rewind below that payment removes it.
    funding_edges [chain_id, block_number, log_index] {
        chain_id: i64,
        block_number: i64,
        log_index: i64,
        token: String,
        funder: String,
        funded: String,
        amount: String,
        paid_block: i64,
    }

    /// Channels of the x402 batch-settlement contract as they opened: who pays through each,
    /// who is paid, in which token.
    x402_channels [chain_id, block_number, log_index] {
        chain_id: i64,
        block_number: i64,
        log_index: i64,
        channel_id: String,
        payer: String,
        receiver: String,
        token: String,
    }
}
