//! The subgraph's counters, computed when asked: per agent (`AgentStats`), per chain
//! (`Protocol`) and over every chain the endpoint serves (`GlobalStats`).

use super::{
    AGENT_ID, AGENT_KEY, AGENT_PARTS, Entity, LAST_ACTIVITY, Scalar, UNREVOKED_FEEDBACK, list,
    parted, reference, scalar,
};

/// `AgentStats`.
pub(super) const AGENT_STATS: Entity = Entity {
    name: "AgentStats",
    single: "agentStats",
    plural: "agentStats_collection",
    from: "FROM agents a WHERE a.source = 'erc8004'",
    keys: AGENT_KEY,
    chain: "a.chain_id",
    fields: &[
        parted(scalar("id", Scalar::Id, AGENT_ID), AGENT_PARTS),
        parted(
            reference("agent", "Agent", AGENT_ID, AGENT_KEY),
            AGENT_PARTS,
        ),
        scalar("totalFeedback", Scalar::BigInt, UNREVOKED_FEEDBACK),
        scalar(
            "averageFeedbackValue",
            Scalar::BigDecimal,
            concat!(
                "coalesce((SELECT avg(",
                feedback_value!(),
                ") FROM feedback f INDEXED BY feedback_agent WHERE ",
                of_token!("f"),
                " AND NOT ",
                revoked!(),
                "), 0) || 'e-0'"
            ),
        ),
        scalar(
            "totalValidations",
            Scalar::BigInt,
            concat!(
                "(SELECT count(*) FROM validation_requests v WHERE ",
                of_token!("v"),
                ")"
            ),
        ),
        scalar(
            "completedValidations",
            Scalar::BigInt,
            concat!(
                "(SELECT count(*) FROM validation_requests v WHERE ",
                of_token!("v"),
                " AND EXISTS (SELECT 1 FROM validation_responses s WHERE s.chain_id = v.chain_id AND s.registry = v.registry AND s.request_hash = v.request_hash))"
            ),
        ),
        scalar(
            "averageValidationScore",
            Scalar::BigDecimal,
            concat!(
                "coalesce((SELECT avg(s.response) FROM validation_requests v JOIN validation_responses s ON (s.chain_id, s.block_number, s.log_index) = (SELECT s2.chain_id, s2.block_number, s2.log_index FROM validation_responses s2 WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1) WHERE ",
                of_token!("v"),
                "), 0) || 'e-0'"
            ),
        ),
        scalar("lastActivity", Scalar::BigInt, LAST_ACTIVITY),
        // The subgraph moves it with every feedback, as it does lastActivity.
        scalar("updatedAt", Scalar::BigInt, LAST_ACTIVITY),
    ],
};

/// `Protocol`.
pub(super) const PROTOCOL: Entity = Entity {
    name: "Protocol",
    single: "protocol",
    plural: "protocols",
    from: "FROM chain_cursor c WHERE true",
    keys: &["c.chain_id"],
    chain: "c.chain_id",
    fields: &[
        scalar("id", Scalar::Id, "CAST(c.chain_id AS TEXT)"),
        scalar("chainId", Scalar::BigInt, "c.chain_id"),
        scalar("name", Scalar::String, "c.name"),
        scalar(
            "identityRegistry",
            Scalar::Bytes,
            "(SELECT a.registry FROM agents a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004' LIMIT 1)",
        ),
        scalar(
            "reputationRegistry",
            Scalar::Bytes,
            "(SELECT '0x' || lower(hex(e.address)) FROM feedback f JOIN events e ON e.chain_id = f.chain_id AND e.block_number = f.block_number AND e.log_index = f.log_index WHERE f.chain_id = c.chain_id LIMIT 1)",
        ),
        scalar(
            "validationRegistry",
            Scalar::Bytes,
            "(SELECT '0x' || lower(hex(e.address)) FROM validation_requests v JOIN events e ON e.chain_id = v.chain_id AND e.block_number = v.block_number AND e.log_index = v.log_index WHERE v.chain_id = c.chain_id LIMIT 1)",
        ),
        scalar(
            "totalAgents",
            Scalar::BigInt,
            "(SELECT count(*) FROM agents a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004')",
        ),
        scalar(
            "totalFeedback",
            Scalar::BigInt,
            "(SELECT count(*) FROM feedback f WHERE f.chain_id = c.chain_id)",
        ),
        scalar(
            "totalValidations",
            Scalar::BigInt,
            "(SELECT count(*) FROM validation_requests v WHERE v.chain_id = c.chain_id)",
        ),
        list(
            "agents",
            Scalar::String,
            "(SELECT json_group_array(a.chain_id || ':' || a.token_id) FROM agents a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004')",
        ),
        list(
            "tags",
            Scalar::String,
            "(SELECT json_group_array(t) FROM (SELECT f.tag1 AS t FROM feedback f WHERE f.chain_id = c.chain_id AND f.tag1 != '' UNION SELECT f.tag2 FROM feedback f WHERE f.chain_id = c.chain_id AND f.tag2 != '' ORDER BY 1))",
        ),
        scalar(
            "updatedAt",
            Scalar::BigInt,
            "coalesce((SELECT max(e.block_timestamp) FROM events e WHERE e.chain_id = c.chain_id AND e.block_number = c.indexed_block), 0)",
        ),
    ],
};

/// `GlobalStats`.
pub(super) const GLOBAL_STATS: Entity = Entity {
    name: "GlobalStats",
    single: "globalStats",
    plural: "globalStats_collection",
    from: "FROM (SELECT 'global' AS id) o WHERE true",
    keys: &["o.id"],
    // Every chain the endpoint serves; on a per-chain endpoint, that chain's figures.
    chain: "",
    fields: &[
        scalar("id", Scalar::Id, "o.id"),
        scalar(
            "totalAgents",
            Scalar::BigInt,
            "(SELECT count(*) FROM agents a WHERE a.source = 'erc8004' AND ($CHAIN IS NULL OR a.chain_id = $CHAIN))",
        ),
        scalar(
            "totalFeedback",
            Scalar::BigInt,
            "(SELECT count(*) FROM feedback f WHERE $CHAIN IS NULL OR f.chain_id = $CHAIN)",
        ),
        scalar(
            "totalValidations",
            Scalar::BigInt,
            "(SELECT count(*) FROM validation_requests v WHERE $CHAIN IS NULL OR v.chain_id = $CHAIN)",
        ),
        scalar(
            "totalProtocols",
            Scalar::BigInt,
            "(SELECT count(*) FROM chain_cursor c WHERE $CHAIN IS NULL OR c.chain_id = $CHAIN)",
        ),
        list(
            "tags",
            Scalar::String,
            "(SELECT json_group_array(t) FROM (SELECT f.tag1 AS t FROM feedback f WHERE f.tag1 != '' AND ($CHAIN IS NULL OR f.chain_id = $CHAIN) UNION SELECT f.tag2 FROM feedback f WHERE f.tag2 != '' AND ($CHAIN IS NULL OR f.chain_id = $CHAIN) ORDER BY 1))",
        ),
        scalar(
            "updatedAt",
            Scalar::BigInt,
            "coalesce((SELECT max(e.block_timestamp) FROM chain_cursor c JOIN events e ON e.chain_id = c.chain_id AND e.block_number = c.indexed_block WHERE $CHAIN IS NULL OR c.chain_id = $CHAIN), 0)",
        ),
    ],
};
