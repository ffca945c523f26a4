//! Facts of the ERC-8004 Identity Registry, one table per event. See [`super`] for what a
//! declaration holds.

super::tables! {
    /// ERC-8004 Identity Registry `Registered` events: an agent minted with its owner and URI.
    identity_registrations [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        owner: String,
        uri: String,
        block_number: i64,
        log_index: i64,
        tx_hash: String,
        timestamp: i64,
    }

    /// ERC-8004 Identity Registry `Transfer` events: an agent's token changing owner.
    identity_transfers [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        from_address: String,
        to_address: String,
        block_number: i64,
        log_index: i64,
    }

    /// ERC-8004 Identity Registry `URIUpdated` events: an agent's registration file moved.
    identity_uri_updates [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        uri: String,
        updated_by: String,
        block_number: i64,
        log_index: i64,
    }

    /// ERC-8004 Identity Registry `MetadataSet` events: one on-chain metadata entry set.
    identity_metadata [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        token_id: String,
        key: String,
        value: Vec<u8>,
        block_number: i64,
        log_index: i64,
    }

    /// ERC-8004 Identity Registry `Approval` and `ApprovalForAll` events: who may act for an
    /// owner.
    identity_approvals [chain_id, block_number, log_index] {
        chain_id: i64,
        registry: String,
        owner: String,
        operator: String,
        /// NULL for ApprovalForAll
        token_id: Option<String>,
        approved: i64,
        block_number: i64,
        log_index: i64,
    }
}
