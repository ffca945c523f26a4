//! Agents as derived from their facts and documents, and the indexes discovery reads them through.
//! See [`super`] for what a declaration holds.

super::tables! {
    /// Every agent the index knows, one row each, derived from its facts: ERC-8004 tokens and
    /// agent contracts alike.
    agents [agent_key] {
        /// "{chain}:{registry}:{token id}" or "{chain}:{contract}"
        agent_key: String,
        chain_id: i64,
        /// factory | registry | erc8004
        source: String,
        /// the agent contract
        address: Option<String>,
        /// identity registry, factory or registry that found it
        registry: Option<String>,
        token_id: Option<String>,
        owner: String,
        /// JSON array
        operators: String,
        /// ERC-8004 agent URI or registry metadata URI
        uri: Option<String>,
        agent_wallet: Option<String>,
        payment_address: Option<String>,
        /// the agent contract's on-chain card, JSON
        card: Option<String>,
        card_uri: Option<String>,
        card_hash: Option<String>,
        name: Option<String>,
        description: Option<String>,
        active: i64,
        heartbeat_interval: Option<i64>,
        last_heartbeat: Option<i64>,
        /// JSON object: registry address -> status
        registry_status: Option<String>,
        registered_block: i64,
        registered_at: i64,
        last_event_block: i64,
    }

    /// What Masumi's registry says of each of its agents (source `masumi`), beside its
    /// `agents` row: the current NFT, and its metadata read into one shape, with the lints.
    masumi_agents [agent_key] {
        agent_key: String,
        /// the current NFT's unit: policy id and asset name, hex
        unit: String,
        policy_id: String,
        asset_name: String,
        registry_version: i64,
        /// the metadata read (`documents::masumi::MasumiMetadata`), JSON
        metadata: String,
        /// the CIP-25 object as minted, JSON
        raw_metadata: Option<String>,
        /// JSON array of lints
        lints: String,
        /// why the current NFT has no metadata
        metadata_error: Option<String>,
        /// the block its NFT was burned in, for a deregistered agent
        deregistered_block: Option<i64>,
        /// how many times it was updated (V2 mints after the first)
        updates: i64,
    }

    /// Each Masumi escrow (a purchase from an agent on Cardano) as its actions leave it: what
    /// was paid, by whom, and how it ended.
    masumi_payments [escrow_key] {
        escrow_key: String,
        chain_id: i64,
        agent_key: Option<String>,
        contract_version: i64,
        buyer: String,
        seller: String,
        unit: String,
        amount: String,
        /// the state it is in, or left when paid out
        state: Option<String>,
        /// released | refunded | disputed, once paid out
        outcome: Option<String>,
        locked_block: i64,
        locked_at: i64,
        /// the locking transaction, hex
        lock_tx: String,
        settled_block: Option<i64>,
        settled_at: Option<i64>,
    }

    /// The skills an agent's card or registration file lists.
    agent_skills [agent_key, skill_id] {
        agent_key: String,
        skill_id: String,
        name: String,
        description: Option<String>,
        /// JSON array, lower case
        tags: String,
    }

    /// Tags an agent declares itself, outside any skill (a Masumi entry's metadata `tags`),
    /// lower case.
    agent_tags [agent_key, tag] {
        agent_key: String,
        tag: String,
    }

    /// Every skill id (case-folded) and tag of every agent as a row of its own, so a skill or
    /// tag filter is an index lookup; kept in step with `agent_skills` and `agent_tags` by the
    /// migrations' triggers.
    agent_terms [term, kind, agent_key] as KeptByTrigger {
        term: String,
        /// skill | tag
        kind: String,
        agent_key: String,
        /// the agent's `agent_reputation.score`, copied by the triggers (NULL while it has
        /// none), so each term's agents are listed best first by an index
        score: Option<f64>,
    }

    /// The full-text index of agents' names, descriptions, skills and tags.
    agent_search [] as SearchIndex {
        agent_key: String,
        name: Option<String>,
        description: Option<String>,
        skills: Option<String>,
        tags: Option<String>,
    }

    /// A number for each agent with a search row, so the word lists of `agent_postings` hold
    /// small integers; ties in relevance go to the lower number.
    search_agents [doc] {
        doc: i64,
        agent_key: String,
    }

    /// Each word of each agent's search text with its weight (`documents::search_postings`),
    /// read heaviest first by `agent_postings_impact` to rank a search's best matches.
    agent_postings [term, doc] {
        /// the agent's number in `search_agents`
        doc: i64,
        term: String,
        weight: i64,
    }

    /// What each ERC-8004 agent's registration file says, a column per field, for the agent0
    /// subgraph endpoint's filters; absent while the agent has no readable file.
    agent_registrations [agent_key] {
        agent_key: String,
        /// the file's URI, as the chain gives it
        uri: String,
        name: Option<String>,
        description: Option<String>,
        image: Option<String>,
        active: Option<i64>,
        x402: Option<i64>,
        /// JSON array
        supported_trusts: String,
        /// JSON array, as the file lists them
        services: String,
        mcp_endpoint: Option<String>,
        mcp_version: Option<String>,
        a2a_endpoint: Option<String>,
        a2a_version: Option<String>,
        web_endpoint: Option<String>,
        email_endpoint: Option<String>,
        oasf_endpoint: Option<String>,
        oasf_version: Option<String>,
        /// JSON array
        oasf_skills: String,
        /// JSON array
        oasf_domains: String,
        ens: Option<String>,
        did: Option<String>,
    }

    /// What the agent0 subgraph's `AgentRegistrationFile.a2aSkills` holds for each ERC-8004
    /// agent with a readable registration file, in order: what the file's A2A service declares
    /// (`a2aSkills`), else the tags of the agent's skills, then their ids (the agent0 SDK's own
    /// crawler fills the field with the card's tags). Rewritten with the registration row.
    agent_a2a_skills [agent_key, position] {
        agent_key: String,
        position: i64,
        skill: String,
    }

    /// The registration files' names and descriptions, indexed for the subgraph endpoint's
    /// substring filters.
    agent_registration_text [] as SearchIndex {
        agent_key: String,
        name: Option<String>,
        description: Option<String>,
    }

    /// What discovery shows of an agent: the registration file first, then the card, then the
    /// chain.
    agent_profiles [agent_key] {
        agent_key: String,
        name: Option<String>,
        description: Option<String>,
        card_uri: Option<String>,
        /// ok | invalid | failed | pending | hash_mismatch | none
        card_status: Option<String>,
        /// the card's signature status
        card_signature: Option<String>,
        /// ERC-8004: the registration file's registrations name this agent
        registration_verified: Option<i64>,
        /// ERC-8004: /.well-known/agent-registration.json on the A2A endpoint's origin names it
        domain_verified: Option<i64>,
        protocol_version: Option<String>,
        x402: i64,
        /// JSON array
        input_modes: String,
        /// JSON array
        output_modes: String,
        /// JSON array of declared terms
        payments: String,
        /// agents.last_event_block it was computed from
        chain_block: i64,
        document_digest: Option<String>,
        document_seq: i64,
    }

    /// Every x402 payment term an agent's documents declare (`agent_profiles.payments`, a row
    /// each), for x402 Bazaar discovery (`GET /discovery/resources`): rewritten with the
    /// profile.
    agent_x402_terms [agent_key, position] {
        agent_key: String,
        position: i64,
        /// the resource URL the terms are for, when declared
        resource: Option<String>,
        /// a2a-x402 | x402-payment | skill-pricing | registration
        source: String,
        /// as written
        network: Option<String>,
        asset: Option<String>,
        amount: Option<String>,
        /// lower case when hex
        pay_to: Option<String>,
        skill: Option<String>,
    }

    /// When each agent was last active on-chain, kept by the writer's activity stage
    /// (`store/stages/activity.rs`): the newest of its own events, the metadata its owner set,
    /// the feedback given to it and revoked.
    agent_activity [agent_key] {
        agent_key: String,
        chain_id: i64,
        /// the block of its newest fact
        last_block: i64,
        /// that fact's block time, as the agent0 subgraph reports `updatedAt` (the registration's
        /// time when nothing followed it)
        updated_at: i64,
    }
}
