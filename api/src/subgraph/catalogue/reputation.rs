//! What the Reputation and Validation registries record of an agent: `Feedback` with its
//! `FeedbackResponse`s and `FeedbackFile`, and `Validation` (a request with its latest response).

use super::shared::{FEEDBACK_VALUE, cid, revoked_flag, uri_type};
use super::{
    Entity, Paging, Scalar, at, compared, derived, int, keep, keep_all, link, list, parted,
    reference, scalar, text,
};
use agentindex_indexer::schema::{
    agents, documents, events, feedback, feedback_responses, feedback_revocations,
    validation_requests, validation_responses,
};
use agentindex_indexer::store::Dialect;

/// A feedback's id, `chainId:agentId:client:index`. Migration 0015 indexes each agent's feedback
/// by this exact expression (`feedback_agent_id`, `feedback_agent_time`), so `feedback(first:
/// N)` under an agent reads N index entries: spelled otherwise, the index is not used. The
/// integers are cast because PostgreSQL indexes only immutable expressions (`||` on a number
/// is not); the text is the same.
const FEEDBACK_ID: &str = "CAST(f.chain_id AS TEXT) || ':' || f.token_id || ':' || f.client || ':' || CAST(f.feedback_index AS TEXT)";

/// The key of feedback row `f`: what refs to a feedback match.
fn feedback_key() -> &'static [&'static str] {
    let f = |column| at("f", column);
    keep_all(vec![
        f(feedback::chain_id),
        f(feedback::registry),
        f(feedback::token_id),
        f(feedback::client),
        f(feedback::feedback_index),
    ])
}

/// The event of the fact `alias` (a table with `chain_id`, `block_number` and `log_index`).
fn event_of(alias: &str) -> String {
    format!(
        "e.chain_id = {alias}.chain_id AND e.block_number = {alias}.block_number AND e.log_index = {alias}.log_index"
    )
}

/// A feedback's responses, a page per feedback. Their ids and createdAt are read from `events`
/// (the transaction's hash, the block's time), so no index holds them in either order: a page
/// is sorted from the feedback's own responses.
fn response_pages() -> Paging {
    let (f, p) = (|column| at("f", column), |column| at("p", column));
    Paging {
        table: keep(format!("{} p", feedback_responses::NAME)),
        links: keep_all(vec![
            link(f(feedback::chain_id), p(feedback_responses::chain_id)),
            link(f(feedback::registry), p(feedback_responses::registry)),
            link(f(feedback::token_id), p(feedback_responses::token_id)),
            link(f(feedback::client), p(feedback_responses::client)),
            link(
                f(feedback::feedback_index),
                p(feedback_responses::feedback_index),
            ),
        ]),
        index: "feedback_responses_feedback",
        ordered: &[],
    }
}

/// `Feedback`.
pub(super) fn feedback() -> Entity {
    let f = |column| at("f", column);
    Entity {
        name: "Feedback",
        single: "feedback",
        plural: "feedbacks",
        from: keep(format!(
            "FROM {} f JOIN {} a ON a.agent_key = f.chain_id || ':' || f.registry || ':' || f.token_id WHERE f.feedback_index IS NOT NULL",
            feedback::NAME,
            agents::NAME
        )),
        keys: feedback_key(),
        chain: f(feedback::chain_id),
        fields: keep_all(vec![
            parted(
                scalar("id", Scalar::Id, FEEDBACK_ID),
                vec![
                    int(f(feedback::chain_id)),
                    text(f(feedback::token_id)),
                    text(f(feedback::client)),
                    int(f(feedback::feedback_index)),
                ],
            ),
            parted(
                reference(
                    "agent",
                    "Agent",
                    "f.chain_id || ':' || f.token_id",
                    &["f.chain_id || ':' || f.registry || ':' || f.token_id"],
                ),
                vec![int(f(feedback::chain_id)), text(f(feedback::token_id))],
            ),
            scalar("clientAddress", Scalar::Bytes, f(feedback::client)),
            scalar("feedbackIndex", Scalar::BigInt, f(feedback::feedback_index)),
            compared(
                "value",
                Scalar::BigDecimal,
                "f.value || 'e-' || f.value_decimals",
                FEEDBACK_VALUE,
            ),
            scalar("tag1", Scalar::String, f(feedback::tag1)),
            scalar("tag2", Scalar::String, f(feedback::tag2)),
            scalar("endpoint", Scalar::String, f(feedback::endpoint)),
            scalar("feedbackURI", Scalar::String, f(feedback::feedback_uri)),
            scalar(
                "feedbackURIType",
                Scalar::String,
                format!("coalesce({}, 'unknown')", uri_type("f.feedback_uri")),
            ),
            scalar("feedbackHash", Scalar::Bytes, f(feedback::feedback_hash)),
            scalar("isRevoked", Scalar::Boolean, revoked_flag()),
            scalar("createdAt", Scalar::BigInt, f(feedback::timestamp)),
            scalar(
                "revokedAt",
                Scalar::BigInt,
                format!(
                    "(SELECT min(e.block_timestamp) FROM {} r JOIN {} e ON {} WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index)",
                    feedback_revocations::NAME,
                    events::NAME,
                    event_of("r")
                ),
            ),
            reference(
                "feedbackFile",
                "FeedbackFile",
                format!(
                    "CASE WHEN EXISTS (SELECT 1 FROM {} d WHERE d.uri = f.feedback_uri AND d.expect = 'feedback' AND d.projection IS NOT NULL) THEN f.tx_hash || ':' || {} END",
                    documents::NAME,
                    cid("f.feedback_uri")
                ),
                feedback_key(),
            ),
            derived(
                "responses",
                "FeedbackResponse",
                &[
                    "p.chain_id",
                    "p.registry",
                    "p.token_id",
                    "p.client",
                    "p.feedback_index",
                ],
                response_pages(),
            ),
        ]),
    }
}

/// `FeedbackResponse`.
pub(super) fn feedback_response(dialect: Dialect) -> Entity {
    let p = |column| at("p", column);
    Entity {
        name: "FeedbackResponse",
        single: "feedbackResponse",
        plural: "feedbackResponses",
        from: keep(format!(
            "FROM {} p JOIN {} e ON {} WHERE true",
            feedback_responses::NAME,
            events::NAME,
            event_of("p")
        )),
        keys: keep_all(vec![
            p(feedback_responses::chain_id),
            p(feedback_responses::block_number),
            p(feedback_responses::log_index),
        ]),
        chain: p(feedback_responses::chain_id),
        fields: keep_all(vec![
            scalar(
                "id",
                Scalar::Id,
                format!(
                    "p.chain_id || ':' || p.token_id || ':' || p.client || ':' || p.feedback_index || ':0x' || {} || ':' || p.log_index",
                    dialect.lower_hex("e.tx_hash")
                ),
            ),
            reference(
                "feedback",
                "Feedback",
                "p.chain_id || ':' || p.token_id || ':' || p.client || ':' || p.feedback_index",
                keep_all(vec![
                    p(feedback_responses::chain_id),
                    p(feedback_responses::registry),
                    p(feedback_responses::token_id),
                    p(feedback_responses::client),
                    p(feedback_responses::feedback_index),
                ]),
            ),
            scalar("responder", Scalar::Bytes, p(feedback_responses::responder)),
            scalar(
                "responseUri",
                Scalar::String,
                p(feedback_responses::response_uri),
            ),
            scalar(
                "responseHash",
                Scalar::Bytes,
                p(feedback_responses::response_hash),
            ),
            scalar(
                "createdAt",
                Scalar::BigInt,
                at("e", events::block_timestamp),
            ),
        ]),
    }
}

/// `FeedbackFile`.
pub(super) fn feedback_file(dialect: Dialect) -> Entity {
    let projected = |path: &str| dialect.json_path("d.projection", path);
    let projected_list = |path: &str| format!("coalesce({}, '[]')", projected(path));
    let file_tag = |tag: &str| format!("CASE WHEN f.{tag} = '' THEN {} END", projected(tag));
    Entity {
        name: "FeedbackFile",
        single: "feedbackFile",
        plural: "feedbackFiles",
        from: keep(format!(
            "FROM {} f JOIN {} d ON d.uri = f.feedback_uri AND d.expect = 'feedback' AND d.projection IS NOT NULL WHERE f.feedback_index IS NOT NULL",
            feedback::NAME,
            documents::NAME
        )),
        keys: feedback_key(),
        chain: at("f", feedback::chain_id),
        fields: keep_all(vec![
            scalar(
                "id",
                Scalar::Id,
                format!("f.tx_hash || ':' || {}", cid("f.feedback_uri")),
            ),
            scalar("cid", Scalar::String, cid("f.feedback_uri")),
            scalar(
                "feedbackId",
                Scalar::String,
                "f.chain_id || ':' || f.token_id || ':' || f.client || ':' || f.feedback_index",
            ),
            scalar("agentRegistry", Scalar::String, projected("agent_registry")),
            scalar("agentId", Scalar::BigInt, projected("agent_id")),
            scalar("clientAddress", Scalar::String, projected("client_address")),
            scalar("createdAtIso", Scalar::String, projected("created_at")),
            scalar("valueRaw", Scalar::BigInt, projected("value")),
            scalar("valueDecimals", Scalar::Int, projected("value_decimals")),
            scalar("text", Scalar::String, projected("text")),
            scalar("mcpTool", Scalar::String, projected("mcp_tool")),
            scalar("mcpPrompt", Scalar::String, projected("mcp_prompt")),
            scalar("mcpResource", Scalar::String, projected("mcp_resource")),
            list("a2aSkills", Scalar::String, projected_list("a2a_skills")),
            scalar("a2aContextId", Scalar::String, projected("a2a_context_id")),
            scalar("a2aTaskId", Scalar::String, projected("a2a_task_id")),
            list("oasfSkills", Scalar::String, projected_list("oasf_skills")),
            list(
                "oasfDomains",
                Scalar::String,
                projected_list("oasf_domains"),
            ),
            scalar(
                "proofOfPaymentFromAddress",
                Scalar::String,
                projected("proof_of_payment.from_address"),
            ),
            scalar(
                "proofOfPaymentToAddress",
                Scalar::String,
                projected("proof_of_payment.to_address"),
            ),
            scalar(
                "proofOfPaymentChainId",
                Scalar::String,
                format!("CAST({} AS TEXT)", projected("proof_of_payment.chain_id")),
            ),
            scalar(
                "proofOfPaymentTxHash",
                Scalar::String,
                projected("proof_of_payment.tx_hash"),
            ),
            // The file's tags only where the chain's are empty, as the subgraph reads them.
            scalar("tag1", Scalar::String, file_tag("tag1")),
            scalar("tag2", Scalar::String, file_tag("tag2")),
            scalar("createdAt", Scalar::BigInt, at("f", feedback::timestamp)),
        ]),
    }
}

/// `Validation`: a request with its latest response, if any.
pub(super) fn validation() -> Entity {
    let (v, s) = (|column| at("v", column), |column| at("s", column));
    let requested_at = format!(
        "(SELECT e.block_timestamp FROM {} e WHERE {})",
        events::NAME,
        event_of("v")
    );
    Entity {
        name: "Validation",
        single: "validation",
        plural: "validations",
        from: keep(format!(
            "FROM {requests} v JOIN {agents} a ON a.agent_key = v.chain_id || ':' || v.registry || ':' || v.token_id LEFT JOIN {responses} s ON (s.chain_id, s.block_number, s.log_index) = (SELECT s2.chain_id, s2.block_number, s2.log_index FROM {responses} s2 WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1) WHERE true",
            requests = validation_requests::NAME,
            agents = agents::NAME,
            responses = validation_responses::NAME
        )),
        keys: keep_all(vec![
            v(validation_requests::chain_id),
            v(validation_requests::block_number),
            v(validation_requests::log_index),
        ]),
        chain: v(validation_requests::chain_id),
        fields: keep_all(vec![
            scalar("id", Scalar::Id, v(validation_requests::request_hash)),
            parted(
                reference(
                    "agent",
                    "Agent",
                    "v.chain_id || ':' || v.token_id",
                    &["v.chain_id || ':' || v.registry || ':' || v.token_id"],
                ),
                vec![
                    int(v(validation_requests::chain_id)),
                    text(v(validation_requests::token_id)),
                ],
            ),
            scalar(
                "validatorAddress",
                Scalar::Bytes,
                v(validation_requests::validator),
            ),
            scalar(
                "requestUri",
                Scalar::String,
                v(validation_requests::request_uri),
            ),
            scalar(
                "requestHash",
                Scalar::Bytes,
                v(validation_requests::request_hash),
            ),
            scalar("response", Scalar::Int, s(validation_responses::response)),
            scalar(
                "responseUri",
                Scalar::String,
                s(validation_responses::response_uri),
            ),
            scalar(
                "responseHash",
                Scalar::Bytes,
                s(validation_responses::response_hash),
            ),
            scalar("tag", Scalar::String, s(validation_responses::tag)),
            scalar(
                "status",
                Scalar::ValidationStatus,
                "CASE WHEN s.response IS NULL THEN 'PENDING' ELSE 'COMPLETED' END",
            ),
            scalar("createdAt", Scalar::BigInt, requested_at.clone()),
            scalar(
                "updatedAt",
                Scalar::BigInt,
                format!("coalesce(s.timestamp, {requested_at})"),
            ),
        ]),
    }
}
