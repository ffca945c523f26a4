//! The subgraph's timeseries (graph-node's `@entity(timeseries: true)`), read from the chain's
//! facts as the public subgraph's mappings write them: a point per ERC-8004 registration
//! (`AgentRegistrationPoint`), per feedback given or revoked (`FeedbackPoint`, a revocation's
//! value delta negative) and per validation request or response (`ValidationPoint`). A point's
//! id is its log's `block × 1,000,000 + log index`, its timestamp the block's, in microseconds.
//! The same rows, grouped into buckets, are the aggregations of `super::rollups`.

use super::shared::FEEDBACK_VALUE;
use super::{Entity, Scalar, compared, int, keep, keep_all, parted, reference, scalar, text};
use agentindex_indexer::schema::{
    events, feedback, feedback_revocations, identity_registrations, validation_requests,
    validation_responses,
};

/// The registration points, one row each: `chain_id, registry, token_id, block_number,
/// log_index, ts` (seconds).
pub(super) fn registration_rows() -> String {
    format!(
        "SELECT r.chain_id, r.registry, r.token_id, r.block_number, r.log_index, r.timestamp AS ts
         FROM {} r",
        identity_registrations::NAME
    )
}

/// The feedback points: a row per feedback given and per feedback revoked, with its `value`
/// (as the catalogue's `BigDecimal` text), `value_num`, `delta`, `revocation` (1 or 0),
/// `created`, `revoked` (counts) and `for_sum` (the value counted in `valueSum`).
pub(super) fn feedback_rows() -> String {
    let value = "f.value || 'e-' || f.value_decimals";
    format!(
        "SELECT f.chain_id, f.registry, f.token_id, f.block_number, f.log_index, f.timestamp AS ts,
                {value} AS value, {FEEDBACK_VALUE} AS value_num, {FEEDBACK_VALUE} AS delta,
                0 AS revocation, 1 AS created, 0 AS revoked, {FEEDBACK_VALUE} AS for_sum
         FROM {feedback} f WHERE f.feedback_index IS NOT NULL
         UNION ALL
         SELECT r.chain_id, r.registry, r.token_id, r.block_number, r.log_index,
                e.block_timestamp, {value}, {FEEDBACK_VALUE}, -{FEEDBACK_VALUE}, 1, 0, 1, 0.0
         FROM {revocations} r
         JOIN {feedback} f ON f.chain_id = r.chain_id AND f.registry = r.registry
             AND f.token_id = r.token_id AND f.client = r.client
             AND f.feedback_index = r.feedback_index
         JOIN {events} e ON e.chain_id = r.chain_id AND e.block_number = r.block_number
             AND e.log_index = r.log_index",
        feedback = feedback::NAME,
        revocations = feedback_revocations::NAME,
        events = events::NAME,
    )
}

/// The validation points: a row per request and per response, with `score`, `request` and
/// `response` (1 or 0) and `response_score`.
pub(super) fn validation_rows() -> String {
    format!(
        "SELECT v.chain_id, v.registry, v.token_id, v.block_number, v.log_index,
                e.block_timestamp AS ts, 0 AS score, 1 AS request, 0 AS response,
                0 AS response_score
         FROM {requests} v
         JOIN {events} e ON e.chain_id = v.chain_id AND e.block_number = v.block_number
             AND e.log_index = v.log_index
         UNION ALL
         SELECT s.chain_id, s.registry, s.token_id, s.block_number, s.log_index, s.timestamp,
                s.response, 0, 1, s.response
         FROM {responses} s",
        requests = validation_requests::NAME,
        responses = validation_responses::NAME,
        events = events::NAME,
    )
}

/// A point entity over `rows` (as alias `p`), with `fields` beside its id, timestamp, protocol
/// and agent.
fn point(
    name: &'static str,
    single: &'static str,
    plural: &'static str,
    rows: String,
    fields: Vec<super::Field>,
) -> Entity {
    let mut all = vec![
        compared(
            "id",
            Scalar::Int8,
            "p.block_number * 1000000 + p.log_index",
            "(p.block_number * 1000000 + p.log_index)",
        ),
        scalar("timestamp", Scalar::Timestamp, "p.ts * 1000000"),
        reference(
            "protocol",
            "Protocol",
            "CAST(p.chain_id AS TEXT)",
            &["p.chain_id"],
        ),
        parted(
            reference(
                "agent",
                "Agent",
                "p.chain_id || ':' || p.token_id",
                &["p.chain_id || ':' || p.registry || ':' || p.token_id"],
            ),
            vec![int("p.chain_id"), text("p.token_id")],
        ),
    ];
    all.extend(fields);
    Entity {
        name,
        single,
        plural,
        from: keep(format!("FROM ({rows}) p WHERE true")),
        keys: &["p.chain_id", "p.block_number", "p.log_index"],
        chain: "p.chain_id",
        fields: keep_all(all),
    }
}

/// `AgentRegistrationPoint`.
pub(super) fn agent_registration_point() -> Entity {
    point(
        "AgentRegistrationPoint",
        "agentRegistrationPoint",
        "agentRegistrationPoints",
        registration_rows(),
        Vec::new(),
    )
}

/// `FeedbackPoint`.
pub(super) fn feedback_point() -> Entity {
    let decimal = |name, sql: &str, number: &str| compared(name, Scalar::BigDecimal, sql, number);
    point(
        "FeedbackPoint",
        "feedbackPoint",
        "feedbackPoints",
        feedback_rows(),
        vec![
            decimal("value", "p.value", "p.value_num"),
            decimal("valueDelta", "p.delta", "p.delta"),
            scalar("isRevocation", Scalar::Boolean, "p.revocation"),
            scalar("createdCount", Scalar::BigInt, "p.created"),
            scalar("revokedCount", Scalar::BigInt, "p.revoked"),
            decimal("valueForSum", "p.for_sum", "p.for_sum"),
        ],
    )
}

/// `ValidationPoint`.
pub(super) fn validation_point() -> Entity {
    point(
        "ValidationPoint",
        "validationPoint",
        "validationPoints",
        validation_rows(),
        vec![
            scalar("score", Scalar::Int, "p.score"),
            scalar("isRequest", Scalar::Boolean, "p.request"),
            scalar("isResponse", Scalar::Boolean, "p.response"),
            scalar("requestCount", Scalar::BigInt, "p.request"),
            scalar("responseCount", Scalar::BigInt, "p.response"),
            scalar("responseScore", Scalar::BigInt, "p.response_score"),
        ],
    )
}
