//! What the Reputation and Validation registries record of an agent: `Feedback` with its
//! `FeedbackResponse`s and `FeedbackFile`, and `Validation` (a request with its latest response).

use super::{
    Entity, Paging, REVOKED, Scalar, compared, derived, int, link, list, parted, reference, scalar,
    text,
};

/// A feedback's id, `chainId:agentId:client:index`. Migration 0015 indexes each agent's feedback
/// by this exact expression (`feedback_agent_id`, `feedback_agent_time`), so `feedback(first:
/// N)` under an agent reads N index entries: spelled otherwise, the index is not used. The
/// integers are cast because PostgreSQL indexes only immutable expressions (`||` on a number
/// is not); the text is the same.
const FEEDBACK_ID: &str = "CAST(f.chain_id AS TEXT) || ':' || f.token_id || ':' || f.client || ':' || CAST(f.feedback_index AS TEXT)";

/// A feedback's responses, a page per feedback. Their ids and createdAt are read from `events`
/// (the transaction's hash, the block's time), so no index holds them in either order: a page
/// is sorted from the feedback's own responses.
const RESPONSE_PAGES: Paging = Paging {
    table: "feedback_responses p",
    links: &[
        link("f.chain_id", "p.chain_id"),
        link("f.registry", "p.registry"),
        link("f.token_id", "p.token_id"),
        link("f.client", "p.client"),
        link("f.feedback_index", "p.feedback_index"),
    ],
    index: "feedback_responses_feedback",
    ordered: &[],
};

/// `Feedback`.
pub(super) const FEEDBACK: Entity = Entity {
    name: "Feedback",
    single: "feedback",
    plural: "feedbacks",
    from: "FROM feedback f JOIN agents a ON a.agent_key = f.chain_id || ':' || f.registry || ':' || f.token_id
           WHERE f.feedback_index IS NOT NULL",
    keys: &["f.chain_id", "f.registry", "f.token_id", "f.client", "f.feedback_index"],
    chain: "f.chain_id",
    fields: &[
        parted(
            scalar("id", Scalar::Id, FEEDBACK_ID),
            &[
                int("f.chain_id"),
                text("f.token_id"),
                text("f.client"),
                int("f.feedback_index"),
            ],
        ),
        parted(
            reference(
                "agent",
                "Agent",
                "f.chain_id || ':' || f.token_id",
                &["f.chain_id || ':' || f.registry || ':' || f.token_id"],
            ),
            &[int("f.chain_id"), text("f.token_id")],
        ),
        scalar("clientAddress", Scalar::Bytes, "f.client"),
        scalar("feedbackIndex", Scalar::BigInt, "f.feedback_index"),
        compared(
            "value",
            Scalar::BigDecimal,
            "f.value || 'e-' || f.value_decimals",
            feedback_value!(),
        ),
        scalar("tag1", Scalar::String, "f.tag1"),
        scalar("tag2", Scalar::String, "f.tag2"),
        scalar("endpoint", Scalar::String, "f.endpoint"),
        scalar("feedbackURI", Scalar::String, "f.feedback_uri"),
        scalar(
            "feedbackURIType",
            Scalar::String,
            concat!("coalesce(", uri_type!("f.feedback_uri"), ", 'unknown')"),
        ),
        scalar("feedbackHash", Scalar::Bytes, "f.feedback_hash"),
        scalar("isRevoked", Scalar::Boolean, REVOKED),
        scalar("createdAt", Scalar::BigInt, "f.timestamp"),
        scalar(
            "revokedAt",
            Scalar::BigInt,
            "(SELECT min(e.block_timestamp) FROM feedback_revocations r JOIN events e ON e.chain_id = r.chain_id AND e.block_number = r.block_number AND e.log_index = r.log_index
               WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index)",
        ),
        reference(
            "feedbackFile",
            "FeedbackFile",
            "CASE WHEN EXISTS (SELECT 1 FROM documents d WHERE d.uri = f.feedback_uri AND d.expect = 'feedback' AND d.projection IS NOT NULL)
               THEN f.tx_hash || ':' || CASE WHEN lower(f.feedback_uri) LIKE 'ipfs://%' THEN substr(f.feedback_uri, 8) ELSE f.feedback_uri END END",
            &["f.chain_id", "f.registry", "f.token_id", "f.client", "f.feedback_index"],
        ),
        derived(
            "responses",
            "FeedbackResponse",
            &["p.chain_id", "p.registry", "p.token_id", "p.client", "p.feedback_index"],
            &RESPONSE_PAGES,
        ),
    ],
};

/// `FeedbackResponse`.
pub(super) const FEEDBACK_RESPONSE: Entity = Entity {
    name: "FeedbackResponse",
    single: "feedbackResponse",
    plural: "feedbackResponses",
    from: "FROM feedback_responses p JOIN events e ON e.chain_id = p.chain_id AND e.block_number = p.block_number AND e.log_index = p.log_index WHERE true",
    keys: &["p.chain_id", "p.block_number", "p.log_index"],
    chain: "p.chain_id",
    fields: &[
        scalar(
            "id",
            Scalar::Id,
            "p.chain_id || ':' || p.token_id || ':' || p.client || ':' || p.feedback_index || ':0x' || lower(hex(e.tx_hash)) || ':' || p.log_index",
        ),
        reference(
            "feedback",
            "Feedback",
            "p.chain_id || ':' || p.token_id || ':' || p.client || ':' || p.feedback_index",
            &[
                "p.chain_id",
                "p.registry",
                "p.token_id",
                "p.client",
                "p.feedback_index",
            ],
        ),
        scalar("responder", Scalar::Bytes, "p.responder"),
        scalar("responseUri", Scalar::String, "p.response_uri"),
        scalar("responseHash", Scalar::Bytes, "p.response_hash"),
        scalar("createdAt", Scalar::BigInt, "e.block_timestamp"),
    ],
};

/// `FeedbackFile`.
pub(super) const FEEDBACK_FILE: Entity = Entity {
    name: "FeedbackFile",
    single: "feedbackFile",
    plural: "feedbackFiles",
    from: "FROM feedback f JOIN documents d ON d.uri = f.feedback_uri AND d.expect = 'feedback' AND d.projection IS NOT NULL
           WHERE f.feedback_index IS NOT NULL",
    keys: &["f.chain_id", "f.registry", "f.token_id", "f.client", "f.feedback_index"],
    chain: "f.chain_id",
    fields: &[
        scalar(
            "id",
            Scalar::Id,
            "f.tx_hash || ':' || CASE WHEN lower(f.feedback_uri) LIKE 'ipfs://%' THEN substr(f.feedback_uri, 8) ELSE f.feedback_uri END",
        ),
        scalar(
            "cid",
            Scalar::String,
            "CASE WHEN lower(f.feedback_uri) LIKE 'ipfs://%' THEN substr(f.feedback_uri, 8) ELSE f.feedback_uri END",
        ),
        scalar(
            "feedbackId",
            Scalar::String,
            "f.chain_id || ':' || f.token_id || ':' || f.client || ':' || f.feedback_index",
        ),
        scalar("agentRegistry", Scalar::String, projected!("$.agent_registry")),
        scalar("agentId", Scalar::BigInt, projected!("$.agent_id")),
        scalar("clientAddress", Scalar::String, projected!("$.client_address")),
        scalar("createdAtIso", Scalar::String, projected!("$.created_at")),
        scalar("valueRaw", Scalar::BigInt, projected!("$.value")),
        scalar("valueDecimals", Scalar::Int, projected!("$.value_decimals")),
        scalar("text", Scalar::String, projected!("$.text")),
        scalar("mcpTool", Scalar::String, projected!("$.mcp_tool")),
        scalar("mcpPrompt", Scalar::String, projected!("$.mcp_prompt")),
        scalar("mcpResource", Scalar::String, projected!("$.mcp_resource")),
        list(
            "a2aSkills",
            Scalar::String,
            "coalesce(json_extract(d.projection, '$.a2a_skills'), '[]')",
        ),
        scalar("a2aContextId", Scalar::String, projected!("$.a2a_context_id")),
        scalar("a2aTaskId", Scalar::String, projected!("$.a2a_task_id")),
        list(
            "oasfSkills",
            Scalar::String,
            "coalesce(json_extract(d.projection, '$.oasf_skills'), '[]')",
        ),
        list(
            "oasfDomains",
            Scalar::String,
            "coalesce(json_extract(d.projection, '$.oasf_domains'), '[]')",
        ),
        scalar(
            "proofOfPaymentFromAddress",
            Scalar::String,
            projected!("$.proof_of_payment.from_address"),
        ),
        scalar(
            "proofOfPaymentToAddress",
            Scalar::String,
            projected!("$.proof_of_payment.to_address"),
        ),
        scalar(
            "proofOfPaymentChainId",
            Scalar::String,
            "CAST(json_extract(d.projection, '$.proof_of_payment.chain_id') AS TEXT)",
        ),
        scalar(
            "proofOfPaymentTxHash",
            Scalar::String,
            projected!("$.proof_of_payment.tx_hash"),
        ),
        // The file's tags only where the chain's are empty, as the subgraph reads them.
        scalar(
            "tag1",
            Scalar::String,
            "CASE WHEN f.tag1 = '' THEN json_extract(d.projection, '$.tag1') END",
        ),
        scalar(
            "tag2",
            Scalar::String,
            "CASE WHEN f.tag2 = '' THEN json_extract(d.projection, '$.tag2') END",
        ),
        scalar("createdAt", Scalar::BigInt, "f.timestamp"),
    ],
};

/// `Validation`.
pub(super) const VALIDATION: Entity = Entity {
    name: "Validation",
    single: "validation",
    plural: "validations",
    from: "FROM validation_requests v JOIN agents a ON a.agent_key = v.chain_id || ':' || v.registry || ':' || v.token_id
           LEFT JOIN validation_responses s ON (s.chain_id, s.block_number, s.log_index) = (
               SELECT s2.chain_id, s2.block_number, s2.log_index FROM validation_responses s2
                WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash
                ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1)
           WHERE true",
    keys: &["v.chain_id", "v.block_number", "v.log_index"],
    chain: "v.chain_id",
    fields: &[
        scalar("id", Scalar::Id, "v.request_hash"),
        parted(
            reference(
                "agent",
                "Agent",
                "v.chain_id || ':' || v.token_id",
                &["v.chain_id || ':' || v.registry || ':' || v.token_id"],
            ),
            &[int("v.chain_id"), text("v.token_id")],
        ),
        scalar("validatorAddress", Scalar::Bytes, "v.validator"),
        scalar("requestUri", Scalar::String, "v.request_uri"),
        scalar("requestHash", Scalar::Bytes, "v.request_hash"),
        scalar("response", Scalar::Int, "s.response"),
        scalar("responseUri", Scalar::String, "s.response_uri"),
        scalar("responseHash", Scalar::Bytes, "s.response_hash"),
        scalar("tag", Scalar::String, "s.tag"),
        scalar(
            "status",
            Scalar::ValidationStatus,
            "CASE WHEN s.response IS NULL THEN 'PENDING' ELSE 'COMPLETED' END",
        ),
        scalar(
            "createdAt",
            Scalar::BigInt,
            "(SELECT e.block_timestamp FROM events e WHERE e.chain_id = v.chain_id AND e.block_number = v.block_number AND e.log_index = v.log_index)",
        ),
        scalar(
            "updatedAt",
            Scalar::BigInt,
            "coalesce(s.timestamp, (SELECT e.block_timestamp FROM events e WHERE e.chain_id = v.chain_id AND e.block_number = v.block_number AND e.log_index = v.log_index))",
        ),
    ],
};
