//! The normalised model every decoder produces, whatever contract version emitted the log.

use alloy::primitives::{Address, B256, Bytes, I256, U256};

/// One decoded event, normalised across sources and ABI versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A factory created an agent contract.
    AgentCreated {
        /// The new agent contract.
        agent: Address,
        /// Its owner.
        owner: Address,
    },
    /// A registry enrolment changed.
    Registry {
        /// The agent contract concerned.
        agent: Address,
        /// What happened.
        action: RegistryAction,
        /// The owner or curator who did it.
        actor: Address,
    },
    /// An agent contract's card (every field) as of now.
    CardUpdated(Box<CardFields>),
    /// An agent contract changed hands.
    AgentOwnerChanged {
        /// The new owner.
        new_owner: Address,
    },
    /// An agent contract was switched on or off.
    ActiveChanged(bool),
    /// An agent contract's promised heartbeat interval, in seconds.
    HeartbeatIntervalChanged(u64),
    /// An agent contract's heartbeat at this timestamp.
    Heartbeat(u64),
    /// An agent contract was paid through `pay` or a native transfer.
    PaymentReceived {
        /// Who paid.
        payer: Address,
        /// The token, zero for native coin.
        token: Address,
        /// How much.
        amount: U256,
    },
    /// The owner took funds out of an agent contract.
    Withdrawn {
        /// The token, zero for native coin.
        token: Address,
        /// Recipient.
        to: Address,
        /// How much.
        amount: U256,
    },
    /// A payer rated an agent contract.
    Rated {
        /// The rater.
        rater: Address,
        /// 0 to 100.
        score: u8,
    },
    /// ERC-8004: an agent was registered.
    Registered {
        /// The agent's token id.
        token_id: U256,
        /// Its URI (may be empty).
        uri: String,
        /// Its owner.
        owner: Address,
    },
    /// ERC-8004: the identity token moved (mint included).
    IdentityTransfer {
        /// Previous owner, zero on mint.
        from: Address,
        /// New owner.
        to: Address,
        /// The agent's token id.
        token_id: U256,
    },
    /// ERC-8004: one token's approved operator changed.
    Approval {
        /// Token owner.
        owner: Address,
        /// Approved address (zero clears).
        approved: Address,
        /// The agent's token id.
        token_id: U256,
    },
    /// ERC-8004: an operator for every token of an owner.
    ApprovalForAll {
        /// Token owner.
        owner: Address,
        /// The operator.
        operator: Address,
        /// Granted or revoked.
        approved: bool,
    },
    /// ERC-8004: the agent URI changed (current `URIUpdated` and legacy `UriUpdated`).
    UriUpdated {
        /// The agent's token id.
        token_id: U256,
        /// The new URI.
        uri: String,
        /// Who changed it.
        updated_by: Address,
    },
    /// ERC-8004: a metadata entry was set (legacy string values become their UTF-8 bytes).
    MetadataSet {
        /// The agent's token id.
        token_id: U256,
        /// The key in plain text.
        key: String,
        /// The value as stored on chain.
        value: Bytes,
    },
    /// ERC-8004: feedback, in any of its historical shapes.
    NewFeedback {
        /// The agent's token id.
        token_id: U256,
        /// Who gave it.
        client: Address,
        /// 1-based index per (agent, client); absent in the oldest shapes.
        index: Option<u64>,
        /// Signed fixed-point value (`uint8 score` becomes `value = score, decimals = 0`).
        value: I256,
        /// Decimals of `value`.
        decimals: u8,
        /// First tag.
        tag1: String,
        /// Second tag.
        tag2: String,
        /// The endpoint the feedback is about.
        endpoint: String,
        /// Off-chain feedback file.
        uri: String,
        /// Hash of that file.
        hash: B256,
        /// Which event signature it came from.
        shape: FeedbackShape,
    },
    /// ERC-8004: a client revoked its feedback.
    FeedbackRevoked {
        /// The agent's token id.
        token_id: U256,
        /// The client.
        client: Address,
        /// Which of its feedback.
        index: u64,
    },
    /// ERC-8004: a response was appended to feedback.
    ResponseAppended {
        /// The agent's token id.
        token_id: U256,
        /// The client whose feedback it answers.
        client: Address,
        /// Which of its feedback.
        index: u64,
        /// Who responded.
        responder: Address,
        /// Off-chain response.
        uri: String,
        /// Hash of the response.
        hash: B256,
    },
    /// ERC-8004: validation requested.
    ValidationRequest {
        /// The validator asked.
        validator: Address,
        /// The agent's token id.
        token_id: U256,
        /// What to validate.
        uri: String,
        /// Unique request hash.
        request_hash: B256,
    },
    /// ERC-8004: a validator answered (every answer is kept).
    ValidationResponse {
        /// The validator.
        validator: Address,
        /// The agent's token id.
        token_id: U256,
        /// The request answered.
        request_hash: B256,
        /// 0 (fail) to 100 (pass).
        response: u8,
        /// Off-chain evidence.
        uri: String,
        /// Hash of the evidence.
        response_hash: B256,
        /// Tag (bytes32 tags of the legacy shape are trimmed UTF-8).
        tag: String,
        /// Which event signature it came from.
        shape: ValidationShape,
    },
    /// A payment token moved.
    TokenTransfer {
        /// Sender.
        from: Address,
        /// Recipient.
        to: Address,
        /// Amount in token units.
        value: U256,
    },
    /// EIP-3009: a signed authorisation was used (pairs with the next Transfer).
    AuthorizationUsed {
        /// The payer who signed.
        authorizer: Address,
        /// Its nonce.
        nonce: B256,
    },
    /// x402 batch settlement: a payer opened a channel to a receiver.
    ChannelCreated {
        /// The channel's id.
        channel: B256,
        /// Who deposits into it (the real payer of what is claimed from it).
        payer: Address,
        /// Who is paid from it.
        receiver: Address,
        /// The token it holds.
        token: Address,
    },
    /// x402 batch settlement: the receiver's side claimed more of a channel.
    ChannelClaimed {
        /// The channel.
        channel: B256,
        /// The amount claimed now.
        amount: U256,
    },
    /// A known event with nothing to index (ERC-4906 MetadataUpdate, curator changes, …).
    Ignored(&'static str),
}

/// What happened to a registry enrolment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryAction {
    /// The owner enrolled the agent; pending until approved in a curated registry.
    Registered {
        /// Metadata URI given.
        metadata_uri: String,
        /// Waiting for a curator.
        pending: bool,
    },
    /// A curator approved it.
    Approved,
    /// A curator removed it.
    Removed {
        /// The curator's reason.
        reason: String,
    },
    /// The owner changed its metadata URI.
    Updated {
        /// The new URI.
        metadata_uri: String,
    },
    /// The owner took it off the registry.
    Deregistered,
}

/// The card an agent contract carries, as its `CardUpdated` event states it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardFields {
    /// Agent name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// A2A endpoint.
    pub url: String,
    /// Agent version.
    pub version: String,
    /// Accepted input MIME types.
    pub default_input_modes: Vec<String>,
    /// Produced output MIME types.
    pub default_output_modes: Vec<String>,
    /// Supports streaming.
    pub streaming: bool,
    /// Supports push notifications.
    pub push_notifications: bool,
    /// Skills: id, name, description, tags.
    pub skills: Vec<SkillFields>,
    /// x402 terms, when `pay_to` is set.
    pub payment: Option<PaymentFields>,
    /// Off-chain card, if anchored.
    pub card_uri: String,
    /// keccak256 of the off-chain card's bytes (zero when none).
    pub card_hash: String,
}

/// One skill of an agent contract's card.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillFields {
    /// Skill id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Search tags.
    pub tags: Vec<String>,
}

/// x402 payment terms of an agent contract.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentFields {
    /// Token address.
    pub asset: String,
    /// Chain the payment is made on.
    pub chain_id: String,
    /// Amount per call, in token units.
    pub amount: String,
    /// Recipient.
    pub pay_to: String,
}

/// The event signature a feedback came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackShape {
    /// v2.0.0: `int128 value, uint8 valueDecimals`.
    Current,
    /// `uint8 score` with endpoint.
    ScoreWithEndpoint,
    /// `uint8 score` without endpoint.
    Score,
    /// `uint8 score` with bytes32 tags.
    ScoreBytes32Tags,
    /// `int256 value`.
    Int256Value,
    /// `uint256 value`.
    Uint256Value,
}

impl FeedbackShape {
    /// The name stored in `feedback.shape`.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackShape::Current => "v2",
            FeedbackShape::ScoreWithEndpoint => "legacy-score-endpoint",
            FeedbackShape::Score => "legacy-score",
            FeedbackShape::ScoreBytes32Tags => "legacy-score-bytes32",
            FeedbackShape::Int256Value => "legacy-int256",
            FeedbackShape::Uint256Value => "legacy-uint256",
        }
    }
}

/// The event signature a validation response came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidationShape {
    /// v2.0.0: string tag.
    Current,
    /// bytes32 tag.
    Bytes32Tag,
}

impl ValidationShape {
    /// The name stored in `validation_responses.shape`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationShape::Current => "v2",
            ValidationShape::Bytes32Tag => "legacy-bytes32",
        }
    }
}

impl Decoded {
    /// The name stored in `events.kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Decoded::AgentCreated { .. } => "AgentCreated",
            Decoded::Registry { action, .. } => match action {
                RegistryAction::Registered { .. } => "AgentRegistered",
                RegistryAction::Approved => "AgentApproved",
                RegistryAction::Removed { .. } => "AgentRemoved",
                RegistryAction::Updated { .. } => "AgentUpdated",
                RegistryAction::Deregistered => "AgentDeregistered",
            },
            Decoded::CardUpdated(_) => "CardUpdated",
            Decoded::AgentOwnerChanged { .. } => "OwnershipTransferred",
            Decoded::ActiveChanged(_) => "ActiveChanged",
            Decoded::HeartbeatIntervalChanged(_) => "HeartbeatIntervalChanged",
            Decoded::Heartbeat(_) => "Heartbeat",
            Decoded::PaymentReceived { .. } => "PaymentReceived",
            Decoded::Withdrawn { .. } => "Withdrawn",
            Decoded::Rated { .. } => "Rated",
            Decoded::Registered { .. } => "Registered",
            Decoded::IdentityTransfer { .. } => "Transfer",
            Decoded::Approval { .. } => "Approval",
            Decoded::ApprovalForAll { .. } => "ApprovalForAll",
            Decoded::UriUpdated { .. } => "URIUpdated",
            Decoded::MetadataSet { .. } => "MetadataSet",
            Decoded::NewFeedback { .. } => "NewFeedback",
            Decoded::FeedbackRevoked { .. } => "FeedbackRevoked",
            Decoded::ResponseAppended { .. } => "ResponseAppended",
            Decoded::ValidationRequest { .. } => "ValidationRequest",
            Decoded::ValidationResponse { .. } => "ValidationResponse",
            Decoded::TokenTransfer { .. } => "Transfer",
            Decoded::AuthorizationUsed { .. } => "AuthorizationUsed",
            Decoded::ChannelCreated { .. } => "ChannelCreated",
            Decoded::ChannelClaimed { .. } => "Claimed",
            Decoded::Ignored(name) => name,
        }
    }
}
