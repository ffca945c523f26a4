//! The agents of the Identity Registry: `Agent`, its registration file (`AgentRegistrationFile`,
//! from `agent_registrations`) and its metadata (`AgentMetadata`, the latest value of each key).

use super::shared::{
    AGENT_ID, agent_key, agent_parts, cid, last_activity, registration_file_id, token_links,
    unrevoked_feedback, uri_event, uri_type,
};
use super::{
    Entity, Field, Ordered, Paging, Scalar, Walk, at, compared, derived, int, keep, keep_all, list,
    parted, reference, scalar, text,
};
use agentindex_indexer::schema::{
    Column, agent_a2a_skills, agent_activity, agent_registration_text, agent_registrations, agents,
    events, feedback, identity_metadata, validation_requests,
};
use agentindex_indexer::store::Dialect;

/// An agent's feedback, a page per agent: by id and by createdAt through the indexes of
/// migration 0015, in any other order from the agent's own feedback.
fn feedback_pages() -> Paging {
    Paging {
        table: keep(format!("{} f", feedback::NAME)),
        links: token_links("f"),
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
    }
}

/// An agent's validation requests, a page per agent (by id through its index).
fn validation_pages() -> Paging {
    Paging {
        table: keep(format!("{} v", validation_requests::NAME)),
        links: token_links("v"),
        index: "validation_requests_agent",
        ordered: &[Ordered {
            field: "id",
            index: "validation_requests_agent_id",
        }],
    }
}

/// An agent's metadata (which only its owner sets), a page per agent.
fn metadata_pages() -> Paging {
    Paging {
        table: keep(format!("{} m", identity_metadata::NAME)),
        links: token_links("m"),
        index: "identity_metadata_token",
        ordered: &[],
    }
}

/// When agents row `a` last changed (its latest event, metadata, feedback or revocation), as
/// the writer's activity stage keeps it in `agent_activity`; `tests/subgraph_dialect.rs` checks
/// it against the same time computed from the facts.
fn agent_updated_at() -> String {
    format!(
        "(SELECT u.updated_at FROM {} u WHERE u.agent_key = a.agent_key)",
        agent_activity::NAME,
    )
}

/// Agents in `updatedAt` order: `agent_activity` read down its index on (updated_at,
/// agent_key) of migration 0018, each row's agent found by its key.
fn activity_walk(dialect: Dialect) -> &'static Walk {
    Box::leak(Box::new(Walk {
        from: keep(format!(
            "FROM {} u{} {} {} a ON a.agent_key = u.agent_key WHERE a.source = 'erc8004'",
            agent_activity::NAME,
            dialect.index_hint("agent_activity_updated"),
            dialect.join_in_order(),
            agents::NAME,
        )),
        by: at("u", agent_activity::updated_at),
    }))
}

/// `Agent`.
pub(super) fn agent(dialect: Dialect) -> Entity {
    let registration = format!(
        "FROM {} g WHERE g.agent_key = a.agent_key",
        agent_registrations::NAME
    );
    Entity {
        name: "Agent",
        single: "agent",
        plural: "agents",
        from: keep(format!(
            "FROM {} a WHERE a.source = 'erc8004'",
            agents::NAME
        )),
        keys: agent_key(),
        chain: at("a", agents::chain_id),
        fields: keep_all(vec![
            parted(scalar("id", Scalar::Id, AGENT_ID), agent_parts()),
            scalar("chainId", Scalar::BigInt, at("a", agents::chain_id)),
            compared(
                "agentId",
                Scalar::BigInt,
                at("a", agents::token_id),
                "CAST(a.token_id AS BIGINT)",
            ),
            scalar("agentURI", Scalar::String, at("a", agents::uri)),
            scalar("agentURIType", Scalar::String, uri_type("a.uri")),
            Field {
                indexed: true,
                ..scalar("owner", Scalar::Bytes, at("a", agents::owner))
            },
            scalar("agentWallet", Scalar::Bytes, at("a", agents::agent_wallet)),
            list("operators", Scalar::Bytes, at("a", agents::operators)),
            scalar("createdAt", Scalar::BigInt, at("a", agents::registered_at)),
            Field {
                walk: Some(activity_walk(dialect)),
                ..scalar("updatedAt", Scalar::BigInt, agent_updated_at())
            },
            Field {
                compare: Some(keep(format!("(SELECT 1 {registration})"))),
                correlated: Some(keep(format!("{registration} AND a.source = 'erc8004'"))),
                ..reference(
                    "registrationFile",
                    "AgentRegistrationFile",
                    format!("(SELECT {} {registration})", registration_file_id(dialect)),
                    agent_key(),
                )
            },
            derived(
                "feedback",
                "Feedback",
                &["f.chain_id || ':' || f.registry || ':' || f.token_id"],
                feedback_pages(),
            ),
            derived(
                "validations",
                "Validation",
                &["v.chain_id || ':' || v.registry || ':' || v.token_id"],
                validation_pages(),
            ),
            derived(
                "metadata",
                "AgentMetadata",
                &["m.chain_id || ':' || m.registry || ':' || m.token_id"],
                metadata_pages(),
            ),
            scalar("totalFeedback", Scalar::BigInt, unrevoked_feedback(dialect)),
            scalar("lastActivity", Scalar::BigInt, last_activity(dialect)),
        ]),
    }
}

/// The test that the registration file `g` has the text bound to `?` in its `column` of the
/// trigram-indexed text table.
fn text_search(dialect: Dialect, column: Column) -> String {
    format!(
        "g.agent_key IN (SELECT x.agent_key FROM {} x WHERE {})",
        agent_registration_text::NAME,
        dialect.substring_match(&format!("x.{column}"), "?")
    )
}

/// `AgentRegistrationFile`.
pub(super) fn agent_registration_file(dialect: Dialect) -> Entity {
    let g = |column| at("g", column);
    Entity {
        name: "AgentRegistrationFile",
        single: "agentRegistrationFile",
        plural: "agentRegistrationFiles",
        // Registrations first: a filter on a file's fields reads the narrow table, not every
        // agent.
        from: keep(format!(
            "FROM {} g {} {} a ON a.agent_key = g.agent_key WHERE a.source = 'erc8004'",
            agent_registrations::NAME,
            dialect.join_in_order(),
            agents::NAME
        )),
        keys: keep_all(vec![g(agent_registrations::agent_key)]),
        chain: at("a", agents::chain_id),
        fields: keep_all(vec![
            scalar("id", Scalar::Id, registration_file_id(dialect)),
            scalar("cid", Scalar::String, cid("g.uri")),
            parted(scalar("agentId", Scalar::String, AGENT_ID), agent_parts()),
            Field {
                search: Some(keep(text_search(dialect, agent_registration_text::name))),
                ..scalar("name", Scalar::String, g(agent_registrations::name))
            },
            Field {
                search: Some(keep(text_search(
                    dialect,
                    agent_registration_text::description,
                ))),
                ..scalar(
                    "description",
                    Scalar::String,
                    g(agent_registrations::description),
                )
            },
            scalar("image", Scalar::String, g(agent_registrations::image)),
            scalar("active", Scalar::Boolean, g(agent_registrations::active)),
            scalar("x402Support", Scalar::Boolean, g(agent_registrations::x402)),
            list(
                "supportedTrusts",
                Scalar::String,
                g(agent_registrations::supported_trusts),
            ),
            scalar(
                "endpointsRawJson",
                Scalar::String,
                g(agent_registrations::services),
            ),
            scalar(
                "mcpEndpoint",
                Scalar::String,
                g(agent_registrations::mcp_endpoint),
            ),
            scalar(
                "mcpVersion",
                Scalar::String,
                g(agent_registrations::mcp_version),
            ),
            scalar(
                "a2aEndpoint",
                Scalar::String,
                g(agent_registrations::a2a_endpoint),
            ),
            scalar(
                "a2aVersion",
                Scalar::String,
                g(agent_registrations::a2a_version),
            ),
            scalar(
                "webEndpoint",
                Scalar::String,
                g(agent_registrations::web_endpoint),
            ),
            scalar(
                "oasfEndpoint",
                Scalar::String,
                g(agent_registrations::oasf_endpoint),
            ),
            scalar(
                "oasfVersion",
                Scalar::String,
                g(agent_registrations::oasf_version),
            ),
            list(
                "oasfSkills",
                Scalar::String,
                g(agent_registrations::oasf_skills),
            ),
            list(
                "oasfDomains",
                Scalar::String,
                g(agent_registrations::oasf_domains),
            ),
            scalar(
                "hasOASF",
                Scalar::Boolean,
                // 1 or 0, a flag both databases compare with a bound integer.
                "CASE WHEN g.oasf_skills != '[]' OR g.oasf_domains != '[]' THEN 1 ELSE 0 END",
            ),
            scalar(
                "emailEndpoint",
                Scalar::String,
                g(agent_registrations::email_endpoint),
            ),
            scalar("ens", Scalar::String, g(agent_registrations::ens)),
            scalar("did", Scalar::String, g(agent_registrations::did)),
            list("mcpTools", Scalar::String, "'[]'"),
            list("mcpPrompts", Scalar::String, "'[]'"),
            list("mcpResources", Scalar::String, "'[]'"),
            // What the agent0 SDK writes there: the file's declared `a2aSkills`, else the
            // tags of the agent's skills, then their ids (`store/documents/registrations.rs`).
            Field {
                member: Some(keep(format!(
                    "g.agent_key IN (SELECT s.agent_key FROM {} s WHERE s.skill = ?)",
                    agent_a2a_skills::NAME
                ))),
                member_check: Some(keep(format!(
                    "EXISTS (SELECT 1 FROM {} s WHERE s.agent_key = g.agent_key AND s.skill = ?)",
                    agent_a2a_skills::NAME
                ))),
                ..list(
                    "a2aSkills",
                    Scalar::String,
                    format!(
                        "(SELECT {} FROM (SELECT skill FROM {} WHERE agent_key = g.agent_key ORDER BY position) k)",
                        dialect.json_aggregate("k.skill"),
                        agent_a2a_skills::NAME
                    ),
                )
            },
            scalar("createdAt", Scalar::BigInt, uri_event("block_timestamp")),
        ]),
    }
}

/// `AgentMetadata`.
pub(super) fn agent_metadata(dialect: Dialect) -> Entity {
    let m = |column| at("m", column);
    Entity {
        name: "AgentMetadata",
        single: "agentMetadata",
        plural: "agentMetadatas",
        from: keep(format!(
            "FROM {metadata} m JOIN {agents} a ON a.agent_key = m.chain_id || ':' || m.registry || ':' || m.token_id WHERE (m.block_number, m.log_index) = (SELECT m2.block_number, m2.log_index FROM {metadata} m2 WHERE m2.chain_id = m.chain_id AND m2.registry = m.registry AND m2.token_id = m.token_id AND m2.key = m.key ORDER BY m2.block_number DESC, m2.log_index DESC LIMIT 1)",
            metadata = identity_metadata::NAME,
            agents = agents::NAME
        )),
        keys: keep_all(vec![
            m(identity_metadata::chain_id),
            m(identity_metadata::registry),
            m(identity_metadata::token_id),
            m(identity_metadata::key),
        ]),
        chain: m(identity_metadata::chain_id),
        fields: keep_all(vec![
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
                vec![
                    int(m(identity_metadata::chain_id)),
                    text(m(identity_metadata::token_id)),
                ],
            ),
            scalar("key", Scalar::String, m(identity_metadata::key)),
            scalar(
                "value",
                Scalar::Bytes,
                format!("'0x' || {}", dialect.lower_hex("m.value")),
            ),
            scalar(
                "updatedAt",
                Scalar::BigInt,
                format!(
                    "(SELECT e.block_timestamp FROM {} e WHERE e.chain_id = m.chain_id AND e.block_number = m.block_number AND e.log_index = m.log_index)",
                    events::NAME
                ),
            ),
        ]),
    }
}
