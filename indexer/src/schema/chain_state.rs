//! Where each chain's follower stands and the reorg window it keeps; the raw events it fetched. See
//! [`super`] for what a declaration holds.

super::tables! {
    /// Where each chain's follower stands: the last block applied, the finalized and head
    /// blocks it last saw, and the block up to which derived state is settled.
    chain_cursor [chain_id] {
        chain_id: i64,
        name: String,
        indexed_block: i64,
        indexed_hash: Option<String>,
        finalized_block: i64,
        head_block: i64,
        settled_block: i64,
    }

    /// The hashes of the unfinalized blocks applied while following the tip: the reorg window.
    block_window [chain_id, number] {
        chain_id: i64,
        number: i64,
        hash: String,
        parent_hash: String,
        timestamp: i64,
    }

    /// Every log fetched from a watched source, decoded or not, compacted to bytes.
    events [chain_id, block_number, log_index] {
        chain_id: i64,
        block_number: i64,
        log_index: i64,
        /// 32 bytes
        block_hash: Vec<u8>,
        block_timestamp: i64,
        /// 32 bytes
        tx_hash: Vec<u8>,
        /// 20 bytes
        address: Vec<u8>,
        /// factory | registry | identity | reputation | validation | agent | token
        source: String,
        /// 32 bytes; NULL for a log without topics
        topic0: Option<Vec<u8>>,
        topics: Vec<u8>,
        data: Vec<u8>,
        /// the normalised event name when decoded
        kind: Option<String>,
        /// why it was not decoded, when it was not
        decode_error: Option<String>,
    }
}
