//! Facts of Masumi on Cardano: the policy runs the follower has read (its paging position),
//! what each registry transaction minted or burned, and what each transaction did to the
//! payment contract's escrows. Block numbers are Cardano
//! block heights; `tx_index` is the transaction's place in its block. See [`super`] for what a
//! declaration holds.

super::tables! {
    /// Every run of a followed minting policy the provider listed and the follower read, one
    /// row per redeemer, whatever it did: how far down the policy's list the follower is.
    cardano_script_runs [chain_id, script, block_number, tx_index, run] {
        chain_id: i64,
        /// the policy id, hex
        script: String,
        block_number: i64,
        tx_index: i64,
        /// its place among the policy's runs listed for this transaction
        run: i64,
        tx_hash: Vec<u8>,
    }

    /// A registry entry minted or burned: a mint carries the holder and the CIP-25 metadata
    /// minted with it, as JSON.
    masumi_registry_actions [chain_id, block_number, tx_index, position] {
        chain_id: i64,
        block_number: i64,
        tx_index: i64,
        /// its place among the transaction's actions (burns first)
        position: i64,
        block_hash: Vec<u8>,
        block_timestamp: i64,
        tx_hash: Vec<u8>,
        agent_key: String,
        policy_id: String,
        registry_version: i64,
        /// hex
        asset_name: String,
        /// mint | burn
        action: String,
        /// the address the NFT was minted to, bech32
        holder: Option<String>,
        /// the asset's CIP-25 object, JSON
        metadata: Option<String>,
        /// why a mint has no metadata
        metadata_error: Option<String>,
    }

    /// What a transaction did to one escrow of Masumi's payment contract: locked it, moved it
    /// to another state, or paid it out (released to the seller, refunded, split after a
    /// dispute); `unreadable` when its datum is not an escrow's.
    masumi_escrow_actions [chain_id, block_number, tx_index, position] {
        chain_id: i64,
        block_number: i64,
        tx_index: i64,
        position: i64,
        block_hash: Vec<u8>,
        block_timestamp: i64,
        tx_hash: Vec<u8>,
        /// the purchase, the same in every state
        escrow_key: String,
        contract_version: i64,
        /// the agent paid, when the datum names a followed registry entry
        agent_key: Option<String>,
        /// payment credentials, hex
        buyer: String,
        seller: String,
        /// lovelace or a token's unit
        unit: String,
        amount: String,
        /// locked | moved | released | refunded | disputed | unreadable
        event: String,
        state: Option<String>,
        output_index: Option<i64>,
        error: Option<String>,
    }
}
