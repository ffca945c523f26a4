//! The subgraph's counters, computed when asked: per agent (`AgentStats`), per chain
//! (`Protocol`) and over every chain the endpoint serves (`GlobalStats`).

use super::shared::{
    AGENT_ID, FEEDBACK_VALUE, agent_key, agent_parts, last_activity, of_token, revoked,
    unrevoked_feedback,
};
use super::{Entity, Scalar, at, keep, keep_all, list, parted, reference, scalar};
use agentindex_indexer::schema::{
    agents, chain_cursor, events, feedback, validation_requests, validation_responses,
};
use agentindex_indexer::store::Dialect;

/// `AgentStats`.
pub(super) fn agent_stats(dialect: Dialect) -> Entity {
    let latest_response = format!(
        "(SELECT s2.chain_id, s2.block_number, s2.log_index FROM {} s2 WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1)",
        validation_responses::NAME
    );
    Entity {
        name: "AgentStats",
        single: "agentStats",
        plural: "agentStats_collection",
        from: keep(format!(
            "FROM {} a WHERE a.source = 'erc8004'",
            agents::NAME
        )),
        keys: agent_key(),
        chain: at("a", agents::chain_id),
        fields: keep_all(vec![
            parted(scalar("id", Scalar::Id, AGENT_ID), agent_parts()),
            parted(
                reference("agent", "Agent", AGENT_ID, agent_key()),
                agent_parts(),
            ),
            scalar("totalFeedback", Scalar::BigInt, unrevoked_feedback(dialect)),
            scalar(
                "averageFeedbackValue",
                Scalar::BigDecimal,
                format!(
                    "coalesce((SELECT avg({FEEDBACK_VALUE}) FROM {} f{} WHERE {} AND NOT {}), 0) || 'e-0'",
                    feedback::NAME,
                    dialect.index_hint("feedback_agent"),
                    of_token("f"),
                    revoked()
                ),
            ),
            scalar(
                "totalValidations",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} v WHERE {})",
                    validation_requests::NAME,
                    of_token("v")
                ),
            ),
            scalar(
                "completedValidations",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} v WHERE {} AND EXISTS (SELECT 1 FROM {} s WHERE s.chain_id = v.chain_id AND s.registry = v.registry AND s.request_hash = v.request_hash))",
                    validation_requests::NAME,
                    of_token("v"),
                    validation_responses::NAME
                ),
            ),
            scalar(
                "averageValidationScore",
                Scalar::BigDecimal,
                format!(
                    "coalesce((SELECT avg(s.response) FROM {} v JOIN {} s ON (s.chain_id, s.block_number, s.log_index) = {latest_response} WHERE {}), 0) || 'e-0'",
                    validation_requests::NAME,
                    validation_responses::NAME,
                    of_token("v")
                ),
            ),
            scalar("lastActivity", Scalar::BigInt, last_activity(dialect)),
            // The subgraph moves it with every feedback, as it does lastActivity.
            scalar("updatedAt", Scalar::BigInt, last_activity(dialect)),
        ]),
    }
}

/// The address of the first contract that emitted one of `facts` (as `alias`) on chain `c`.
fn registry_of(dialect: Dialect, facts: &str, alias: &str) -> String {
    format!(
        "(SELECT '0x' || {} FROM {facts} {alias} JOIN {} e ON e.chain_id = {alias}.chain_id AND e.block_number = {alias}.block_number AND e.log_index = {alias}.log_index WHERE {alias}.chain_id = c.chain_id LIMIT 1)",
        dialect.lower_hex("e.address"),
        events::NAME
    )
}

/// The distinct non-empty tags of the feedback `chain` (a condition on feedback `f`) keeps,
/// in order, as a JSON array.
fn tags(dialect: Dialect, chain: &str) -> String {
    format!(
        "(SELECT {} FROM (SELECT f.tag1 AS t FROM {feedback} f WHERE {chain} AND f.tag1 != '' UNION SELECT f.tag2 FROM {feedback} f WHERE {chain} AND f.tag2 != '' ORDER BY 1))",
        dialect.json_aggregate("t"),
        feedback = feedback::NAME
    )
}

/// `Protocol`.
pub(super) fn protocol(dialect: Dialect) -> Entity {
    Entity {
        name: "Protocol",
        single: "protocol",
        plural: "protocols",
        from: keep(format!("FROM {} c WHERE true", chain_cursor::NAME)),
        keys: keep_all(vec![at("c", chain_cursor::chain_id)]),
        chain: at("c", chain_cursor::chain_id),
        fields: keep_all(vec![
            scalar("id", Scalar::Id, "CAST(c.chain_id AS TEXT)"),
            scalar("chainId", Scalar::BigInt, at("c", chain_cursor::chain_id)),
            scalar("name", Scalar::String, at("c", chain_cursor::name)),
            scalar(
                "identityRegistry",
                Scalar::Bytes,
                format!(
                    "(SELECT a.registry FROM {} a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004' LIMIT 1)",
                    agents::NAME
                ),
            ),
            scalar(
                "reputationRegistry",
                Scalar::Bytes,
                registry_of(dialect, feedback::NAME, "f"),
            ),
            scalar(
                "validationRegistry",
                Scalar::Bytes,
                registry_of(dialect, validation_requests::NAME, "v"),
            ),
            scalar(
                "totalAgents",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004')",
                    agents::NAME
                ),
            ),
            scalar(
                "totalFeedback",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} f WHERE f.chain_id = c.chain_id)",
                    feedback::NAME
                ),
            ),
            scalar(
                "totalValidations",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} v WHERE v.chain_id = c.chain_id)",
                    validation_requests::NAME
                ),
            ),
            list(
                "agents",
                Scalar::String,
                format!(
                    "(SELECT {} FROM {} a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004')",
                    dialect.json_aggregate(AGENT_ID),
                    agents::NAME
                ),
            ),
            list(
                "tags",
                Scalar::String,
                tags(dialect, "f.chain_id = c.chain_id"),
            ),
            scalar(
                "updatedAt",
                Scalar::BigInt,
                format!(
                    "coalesce((SELECT max(e.block_timestamp) FROM {} e WHERE e.chain_id = c.chain_id AND e.block_number = c.indexed_block), 0)",
                    events::NAME
                ),
            ),
        ]),
    }
}

/// `GlobalStats`: every chain the endpoint serves; on a per-chain endpoint, that chain's
/// figures. Its SQL reads the endpoint's chain (NULL for every chain) as `$CHAIN`.
pub(super) fn global_stats(dialect: Dialect) -> Entity {
    let on_chain = |alias: &str| format!("($CHAIN IS NULL OR {alias}.chain_id = $CHAIN)");
    let count = |table: &str, alias: &str| {
        format!(
            "(SELECT count(*) FROM {table} {alias} WHERE {})",
            on_chain(alias)
        )
    };
    Entity {
        name: "GlobalStats",
        single: "globalStats",
        plural: "globalStats_collection",
        from: "FROM (SELECT 'global' AS id) o WHERE true",
        keys: &["o.id"],
        chain: "",
        fields: keep_all(vec![
            scalar("id", Scalar::Id, "o.id"),
            scalar(
                "totalAgents",
                Scalar::BigInt,
                format!(
                    "(SELECT count(*) FROM {} a WHERE a.source = 'erc8004' AND {})",
                    agents::NAME,
                    on_chain("a")
                ),
            ),
            scalar("totalFeedback", Scalar::BigInt, count(feedback::NAME, "f")),
            scalar(
                "totalValidations",
                Scalar::BigInt,
                count(validation_requests::NAME, "v"),
            ),
            scalar(
                "totalProtocols",
                Scalar::BigInt,
                count(chain_cursor::NAME, "c"),
            ),
            list("tags", Scalar::String, tags(dialect, &on_chain("f"))),
            scalar(
                "updatedAt",
                Scalar::BigInt,
                format!(
                    "coalesce((SELECT max(e.block_timestamp) FROM {} c JOIN {} e ON e.chain_id = c.chain_id AND e.block_number = c.indexed_block WHERE $CHAIN IS NULL OR c.chain_id = $CHAIN), 0)",
                    chain_cursor::NAME,
                    events::NAME
                ),
            ),
        ]),
    }
}
