//! The agents of the Identity Registry: `Agent`, its registration file (`AgentRegistrationFile`,
//! from `agent_registrations`) and its metadata (`AgentMetadata`, the latest value of each key).

use super::{
    AGENT_ID, AGENT_KEY, AGENT_PARTS, Entity, Field, LAST_ACTIVITY, Ordered, Paging, Scalar, Shape,
    UNREVOKED_FEEDBACK, compared, derived, int, link, list, parted, reference, scalar, text,
};

/// An agent's feedback, a page per agent: by id and by createdAt through the indexes of
/// migration 0015, in any other order from the agent's own feedback.
const FEEDBACK_PAGES: Paging = Paging {
    table: "feedback f",
    links: token_links!("f"),
    index: "feedback_agent_position",
    ordered: &[
        Ordered {
            field: "id",
            index: "feedback_agent_id",
        },
        Ordered {
            field: "createdAt",
            index: "feedback_agent_time",
        },
    ],
};

/// An agent's validation requests, a page per agent (by id through its index).
const VALIDATION_PAGES: Paging = Paging {
    table: "validation_requests v",
    links: token_links!("v"),
    index: "validation_requests_agent",
    ordered: &[Ordered {
        field: "id",
        index: "validation_requests_agent_id",
    }],
};

/// An agent's metadata (which only its owner sets), a page per agent.
const METADATA_PAGES: Paging = Paging {
    table: "identity_metadata m",
    links: token_links!("m"),
    index: "identity_metadata_token",
    ordered: &[],
};

/// `Agent`.
pub(super) const AGENT: Entity = Entity {
    name: "Agent",
    single: "agent",
    plural: "agents",
    from: "FROM agents a WHERE a.source = 'erc8004'",
    keys: AGENT_KEY,
    chain: "a.chain_id",
    fields: &[
        parted(scalar("id", Scalar::Id, AGENT_ID), AGENT_PARTS),
        scalar("chainId", Scalar::BigInt, "a.chain_id"),
        compared(
            "agentId",
            Scalar::BigInt,
            "a.token_id",
            "CAST(a.token_id AS BIGINT)",
        ),
        scalar("agentURI", Scalar::String, "a.uri"),
        scalar("agentURIType", Scalar::String, uri_type!("a.uri")),
        Field {
            indexed: true,
            ..scalar("owner", Scalar::Bytes, "a.owner")
        },
        scalar("agentWallet", Scalar::Bytes, "a.agent_wallet"),
        list("operators", Scalar::Bytes, "a.operators"),
        scalar("createdAt", Scalar::BigInt, "a.registered_at"),
        scalar(
            "updatedAt",
            Scalar::BigInt,
            concat!(
                "max(coalesce(",
                block_time!("a", "a.last_event_block"),
                ", a.registered_at), ",
                "coalesce((SELECT max(e.block_timestamp) FROM identity_metadata m JOIN events e ON e.chain_id = m.chain_id AND e.block_number = m.block_number AND e.log_index = m.log_index WHERE ",
                of_token!("m"),
                "), 0), ",
                "coalesce((SELECT max(f.timestamp) FROM feedback f INDEXED BY feedback_agent WHERE ",
                of_token!("f"),
                "), 0), ",
                "coalesce((SELECT max(e.block_timestamp) FROM feedback_revocations r JOIN events e ON e.chain_id = r.chain_id AND e.block_number = r.block_number AND e.log_index = r.log_index WHERE ",
                of_token!("r"),
                "), 0))"
            ),
        ),
        Field {
            name: "registrationFile",
            shape: Shape::Ref {
                entity: "AgentRegistrationFile",
                keys: AGENT_KEY,
            },
            sql: concat!(
                "(SELECT ",
                regfile_id!(),
                " FROM agent_registrations g WHERE g.agent_key = a.agent_key)"
            ),
            compare: Some("(SELECT 1 FROM agent_registrations g WHERE g.agent_key = a.agent_key)"),
            id_parts: &[],
            member: None,
            search: None,
            member_check: None,
            indexed: false,
            correlated: Some(
                "FROM agent_registrations g WHERE g.agent_key = a.agent_key AND a.source = 'erc8004'",
            ),
        },
        derived(
            "feedback",
            "Feedback",
            &["f.chain_id || ':' || f.registry || ':' || f.token_id"],
            &FEEDBACK_PAGES,
        ),
        derived(
            "validations",
            "Validation",
            &["v.chain_id || ':' || v.registry || ':' || v.token_id"],
            &VALIDATION_PAGES,
        ),
        derived(
            "metadata",
            "AgentMetadata",
            &["m.chain_id || ':' || m.registry || ':' || m.token_id"],
            &METADATA_PAGES,
        ),
        scalar("totalFeedback", Scalar::BigInt, UNREVOKED_FEEDBACK),
        scalar("lastActivity", Scalar::BigInt, LAST_ACTIVITY),
    ],
};

/// `AgentRegistrationFile`.
pub(super) const AGENT_REGISTRATION_FILE: Entity = Entity {
    name: "AgentRegistrationFile",
    single: "agentRegistrationFile",
    plural: "agentRegistrationFiles",
    // Registrations first: a filter on a file's fields reads the narrow table, not every agent.
    from: "FROM agent_registrations g CROSS JOIN agents a ON a.agent_key = g.agent_key WHERE a.source = 'erc8004'",
    keys: &["g.agent_key"],
    chain: "a.chain_id",
    fields: &[
        scalar("id", Scalar::Id, regfile_id!()),
        scalar(
            "cid",
            Scalar::String,
            "CASE WHEN lower(g.uri) LIKE 'ipfs://%' THEN substr(g.uri, 8) ELSE g.uri END",
        ),
        parted(
            scalar("agentId", Scalar::String, AGENT_ID),
            AGENT_PARTS,
        ),
        Field {
            search: Some(
                "g.agent_key IN (SELECT x.agent_key FROM agent_registration_text x WHERE x.name MATCH ?)",
            ),
            ..scalar("name", Scalar::String, "g.name")
        },
        Field {
            search: Some(
                "g.agent_key IN (SELECT x.agent_key FROM agent_registration_text x WHERE x.description MATCH ?)",
            ),
            ..scalar("description", Scalar::String, "g.description")
        },
        scalar("image", Scalar::String, "g.image"),
        scalar("active", Scalar::Boolean, "g.active"),
        scalar("x402Support", Scalar::Boolean, "g.x402"),
        list("supportedTrusts", Scalar::String, "g.supported_trusts"),
        scalar("endpointsRawJson", Scalar::String, "g.services"),
        scalar("mcpEndpoint", Scalar::String, "g.mcp_endpoint"),
        scalar("mcpVersion", Scalar::String, "g.mcp_version"),
        scalar("a2aEndpoint", Scalar::String, "g.a2a_endpoint"),
        scalar("a2aVersion", Scalar::String, "g.a2a_version"),
        scalar("webEndpoint", Scalar::String, "g.web_endpoint"),
        scalar("oasfEndpoint", Scalar::String, "g.oasf_endpoint"),
        scalar("oasfVersion", Scalar::String, "g.oasf_version"),
        list("oasfSkills", Scalar::String, "g.oasf_skills"),
        list("oasfDomains", Scalar::String, "g.oasf_domains"),
        scalar(
            "hasOASF",
            Scalar::Boolean,
            // 1 or 0, a flag both databases compare with a bound integer.
            "CASE WHEN g.oasf_skills != '[]' OR g.oasf_domains != '[]' THEN 1 ELSE 0 END",
        ),
        scalar("emailEndpoint", Scalar::String, "g.email_endpoint"),
        scalar("ens", Scalar::String, "g.ens"),
        scalar("did", Scalar::String, "g.did"),
        list("mcpTools", Scalar::String, "'[]'"),
        list("mcpPrompts", Scalar::String, "'[]'"),
        list("mcpResources", Scalar::String, "'[]'"),
        Field {
            member: Some(
                "g.agent_key IN (SELECT t.agent_key FROM agent_terms t WHERE t.term = lower(?) AND t.kind = 'skill'
                   AND EXISTS (SELECT 1 FROM agent_skills k WHERE k.agent_key = t.agent_key AND k.skill_id = ?))",
            ),
            member_check: Some(
                "EXISTS (SELECT 1 FROM agent_skills k WHERE k.agent_key = g.agent_key AND k.skill_id = ?)",
            ),
            ..list(
                "a2aSkills",
                Scalar::String,
                "(SELECT json_group_array(k.skill_id) FROM (SELECT skill_id FROM agent_skills WHERE agent_key = g.agent_key ORDER BY skill_id) k)",
            )
        },
        scalar("createdAt", Scalar::BigInt, uri_event!("block_timestamp")),
    ],
};

/// `AgentMetadata`.
pub(super) const AGENT_METADATA: Entity = Entity {
    name: "AgentMetadata",
    single: "agentMetadata",
    plural: "agentMetadatas",
    from: "FROM identity_metadata m JOIN agents a ON a.agent_key = m.chain_id || ':' || m.registry || ':' || m.token_id
           WHERE (m.block_number, m.log_index) = (SELECT m2.block_number, m2.log_index FROM identity_metadata m2
               WHERE m2.chain_id = m.chain_id AND m2.registry = m.registry AND m2.token_id = m.token_id AND m2.key = m.key
               ORDER BY m2.block_number DESC, m2.log_index DESC LIMIT 1)",
    keys: &["m.chain_id", "m.registry", "m.token_id", "m.key"],
    chain: "m.chain_id",
    fields: &[
        scalar(
            "id",
            Scalar::Id,
            "m.chain_id || ':' || m.token_id || ':' || m.key",
        ),
        parted(
            reference(
                "agent",
                "Agent",
                "m.chain_id || ':' || m.token_id",
                &["m.chain_id || ':' || m.registry || ':' || m.token_id"],
            ),
            &[int("m.chain_id"), text("m.token_id")],
        ),
        scalar("key", Scalar::String, "m.key"),
        scalar("value", Scalar::Bytes, "'0x' || lower(hex(m.value))"),
        scalar(
            "updatedAt",
            Scalar::BigInt,
            "(SELECT e.block_timestamp FROM events e WHERE e.chain_id = m.chain_id AND e.block_number = m.block_number AND e.log_index = m.log_index)",
        ),
    ],
};
