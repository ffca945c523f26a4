//! The subgraph's aggregations (graph-node's `@aggregation`, every one cumulative): the points
//! of `super::points` grouped into hourly or daily buckets per chain (`Protocol…Stats`) or per
//! agent (`Agent…Stats`), each bucket's row holding the totals up to its end. A bucket is a
//! row only where its chain or agent had a point in it. Rows are read at the query's
//! `interval` (`$INTERVAL` seconds); the bucket still open (its end after the chain's newest
//! indexed event) is left out unless the query says `current: include` (`$CURRENT`). A row's
//! id is the id of its newest point: stable as the chain grows, unique per aggregation.

use super::points::{feedback_rows, registration_rows, validation_rows};
use super::{
    CURRENT, Entity, Field, INTERVAL, Scalar, compared, int, keep, keep_all, parted, reference,
    scalar, text,
};
use agentindex_indexer::schema::events;

/// Which rows an aggregation groups by besides its bucket.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dimension {
    /// The chain (`protocol`).
    Protocol,
    /// The chain and the agent (`protocol`, `agent`).
    Agent,
}

impl Dimension {
    /// The point columns a row is grouped by.
    fn columns(self) -> &'static str {
        match self {
            Dimension::Protocol => "chain_id",
            Dimension::Agent => "chain_id, registry, token_id",
        }
    }
}

/// The rows of an aggregation over `points`: per dimension and bucket, the per-bucket sums
/// `sums` (`sum(p.x) AS x`, …) and, as `totals`, their running totals (`x` summed over every
/// bucket up to this one), as alias `s`.
fn rows(points: &str, dimension: Dimension, sums: &[(&str, &str)]) -> String {
    let by = dimension.columns();
    let grouped: Vec<String> = sums
        .iter()
        .map(|(name, expression)| format!("sum({expression}) AS {name}"))
        .collect();
    let running: Vec<String> = sums
        .iter()
        .map(|(name, _)| format!("sum(g.{name}) OVER w AS {name}"))
        .collect();
    let g_by: Vec<String> = by.split(", ").map(|c| format!("g.{c}")).collect();
    let p_by: Vec<String> = by.split(", ").map(|c| format!("p.{c}")).collect();
    format!(
        "FROM (SELECT {g_by}, g.bucket, {running}, g.row_id
              FROM (SELECT {p_by}, p.ts / {INTERVAL} AS bucket, {grouped},
                           max(p.block_number * 1000000 + p.log_index) AS row_id
                    FROM ({points}) p GROUP BY {p_by}, p.ts / {INTERVAL}) g
              WINDOW w AS (PARTITION BY {g_by} ORDER BY g.bucket ROWS UNBOUNDED PRECEDING)) s
         WHERE ({CURRENT} = 1 OR (s.bucket + 1) * {INTERVAL} <= (SELECT e.block_timestamp FROM {events} e
             WHERE e.chain_id = s.chain_id ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1))",
        g_by = g_by.join(", "),
        p_by = p_by.join(", "),
        running = running.join(", "),
        grouped = grouped.join(", "),
        events = events::NAME,
    )
}

/// An aggregation entity.
fn aggregation(
    name: &'static str,
    plural: &'static str,
    dimension: Dimension,
    from: String,
    fields: Vec<Field>,
) -> Entity {
    let single = keep(plural.trim_end_matches("_collection"));
    let mut all = vec![
        scalar("id", Scalar::Int8, "s.row_id"),
        compared(
            "timestamp",
            Scalar::Timestamp,
            format!("s.bucket * {INTERVAL} * 1000000"),
            format!("(s.bucket * {INTERVAL} * 1000000)"),
        ),
        reference(
            "protocol",
            "Protocol",
            "CAST(s.chain_id AS TEXT)",
            &["s.chain_id"],
        ),
    ];
    let keys: &'static [&'static str] = match dimension {
        Dimension::Protocol => &["s.chain_id", "s.bucket"],
        Dimension::Agent => {
            all.push(parted(
                reference(
                    "agent",
                    "Agent",
                    "s.chain_id || ':' || s.token_id",
                    &["s.chain_id || ':' || s.registry || ':' || s.token_id"],
                ),
                vec![int("s.chain_id"), text("s.token_id")],
            ));
            &["s.chain_id", "s.registry", "s.token_id", "s.bucket"]
        }
    };
    all.extend(fields);
    Entity {
        name,
        single,
        plural,
        from: keep(from),
        keys,
        chain: "s.chain_id",
        fields: keep_all(all),
    }
}

/// A cumulative decimal total of alias `s`, computed as a floating-point sum (SQLite has no
/// exact decimals) and written out in full (`values::output`).
fn decimal_total(name: &'static str, column: &str) -> Field {
    compared(
        name,
        Scalar::BigDecimal,
        format!("coalesce(s.{column}, 0)"),
        format!("s.{column}"),
    )
}

/// `ProtocolAgentStats`.
pub(super) fn protocol_agent_stats() -> Entity {
    aggregation(
        "ProtocolAgentStats",
        "protocolAgentStats_collection",
        Dimension::Protocol,
        rows(
            &registration_rows(),
            Dimension::Protocol,
            &[("registrations", "1")],
        ),
        vec![scalar(
            "agentRegistrations",
            Scalar::Int8,
            "s.registrations",
        )],
    )
}

/// The feedback totals of one aggregation.
fn feedback_fields() -> Vec<Field> {
    vec![
        scalar("feedbackCreated", Scalar::BigInt, "s.created"),
        scalar("feedbackRevoked", Scalar::BigInt, "s.revoked"),
        decimal_total("valueSum", "for_sum"),
        decimal_total("valueDeltaSum", "delta"),
    ]
}

/// The per-bucket sums of feedback points.
const FEEDBACK_SUMS: [(&str, &str); 4] = [
    ("created", "p.created"),
    ("revoked", "p.revoked"),
    ("for_sum", "p.for_sum"),
    ("delta", "p.delta"),
];

/// `ProtocolFeedbackStats`.
pub(super) fn protocol_feedback_stats() -> Entity {
    aggregation(
        "ProtocolFeedbackStats",
        "protocolFeedbackStats_collection",
        Dimension::Protocol,
        rows(&feedback_rows(), Dimension::Protocol, &FEEDBACK_SUMS),
        feedback_fields(),
    )
}

/// `AgentFeedbackStats`.
pub(super) fn agent_feedback_stats() -> Entity {
    aggregation(
        "AgentFeedbackStats",
        "agentFeedbackStats_collection",
        Dimension::Agent,
        rows(&feedback_rows(), Dimension::Agent, &FEEDBACK_SUMS),
        feedback_fields(),
    )
}

/// The validation totals of one aggregation.
fn validation_fields() -> Vec<Field> {
    vec![
        scalar("validationRequests", Scalar::BigInt, "s.requests"),
        scalar("validationResponses", Scalar::BigInt, "s.responses"),
        scalar("scoreSum", Scalar::BigInt, "s.score_sum"),
    ]
}

/// The per-bucket sums of validation points.
const VALIDATION_SUMS: [(&str, &str); 3] = [
    ("requests", "p.request"),
    ("responses", "p.response"),
    ("score_sum", "p.response_score"),
];

/// `ProtocolValidationStats`.
pub(super) fn protocol_validation_stats() -> Entity {
    aggregation(
        "ProtocolValidationStats",
        "protocolValidationStats_collection",
        Dimension::Protocol,
        rows(&validation_rows(), Dimension::Protocol, &VALIDATION_SUMS),
        validation_fields(),
    )
}

/// `AgentValidationStats`.
pub(super) fn agent_validation_stats() -> Entity {
    aggregation(
        "AgentValidationStats",
        "agentValidationStats_collection",
        Dimension::Agent,
        rows(&validation_rows(), Dimension::Agent, &VALIDATION_SUMS),
        validation_fields(),
    )
}
