//! The agent0 subgraph's schema as agentindex answers it: every entity, its fields with their
//! graph-node types, and the SQL that reads each field from agentindex's tables. Field names, id
//! formats and types follow the public subgraph (`Agent.id` is `chainId:agentId`, a feedback's
//! `chainId:agentId:client:index`, a response's `feedbackId:txHash:logIndex`); where the public
//! subgraph leaves a field empty and agentindex knows it (http registration files, the A2A
//! card's skills), the SQL fills it.

/// A scalar as graph-node types it; what it is sent as and how filters compare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// `ID`: text.
    Id,
    /// `String`.
    String,
    /// `Int`: a JSON number.
    Int,
    /// `BigInt`: a decimal string.
    BigInt,
    /// `BigDecimal`: a decimal string. The SQL reads `{digits}e-{decimals}`.
    BigDecimal,
    /// `Bytes`: lower-case `0x` hex.
    Bytes,
    /// `Boolean`.
    Boolean,
    /// `ValidationStatus`.
    ValidationStatus,
}

impl Scalar {
    /// The type's name in the schema.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Scalar::Id => "ID",
            Scalar::String => "String",
            Scalar::Int => "Int",
            Scalar::BigInt => "BigInt",
            Scalar::BigDecimal => "BigDecimal",
            Scalar::Bytes => "Bytes",
            Scalar::Boolean => "Boolean",
            Scalar::ValidationStatus => "ValidationStatus",
        }
    }
}

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// One value; `sql` reads it.
    Scalar(Scalar),
    /// A list of values; `sql` reads a JSON array.
    List(Scalar),
    /// Another entity, or null; `sql` reads its id, `keys` (expressions over this entity's row)
    /// its key columns in the order of the target's [`Entity::keys`].
    Ref {
        entity: &'static str,
        keys: &'static [&'static str],
    },
    /// The entities whose key columns `by` (expressions over the target's row) equal this
    /// entity's [`Entity::keys`]: graph-node's `@derivedFrom`.
    Derived {
        entity: &'static str,
        by: &'static [&'static str],
    },
}

/// A field of an entity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) shape: Shape,
    /// The SQL that reads it from the entity's row (empty for derived lists).
    pub(crate) sql: &'static str,
    /// The SQL filters and orderings compare, when it differs from `sql` (numbers kept as text,
    /// decimals kept as digits and a scale).
    pub(crate) compare: Option<&'static str>,
    /// For an id (or a reference's id) made of `:`-separated parts, the columns holding each
    /// part: equality and `_in` filters compare the columns, so an index finds the rows.
    pub(crate) id_parts: &'static [Part],
    /// For a list, SQL true when the value bound to each of its `?`s is in the list, for
    /// `_contains` to find rows by an index rather than by reading every row's list.
    pub(crate) member: Option<&'static str>,
    /// For text, SQL true for (at least) the rows whose text holds the FTS5 phrase bound to its
    /// `?`: a trigram index narrows `_contains` before the exact test.
    pub(crate) search: Option<&'static str>,
    /// For a list with `member`, the same test for one row already found (a correlated lookup
    /// rather than the list of every row holding the value).
    pub(crate) member_check: Option<&'static str>,
    /// Whether an index finds rows by this field's value (equality and `_in`).
    pub(crate) indexed: bool,
    /// For a reference, `FROM … WHERE …` reading the referenced row of the row at hand (it may
    /// name this entity's aliases), for nested filters checked row by row.
    pub(crate) correlated: Option<&'static str>,
}

/// One `:`-separated part of an id and the column that holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub(crate) sql: &'static str,
    /// Whether the column holds an integer (else text).
    pub(crate) integer: bool,
}

const fn int(sql: &'static str) -> Part {
    Part { sql, integer: true }
}

const fn text(sql: &'static str) -> Part {
    Part {
        sql,
        integer: false,
    }
}

/// `field`, its id read from `parts`.
const fn parted(field: Field, parts: &'static [Part]) -> Field {
    Field {
        id_parts: parts,
        ..field
    }
}

impl Field {
    /// The expression filters and orderings use.
    pub(crate) fn compare_sql(&self) -> &'static str {
        self.compare.unwrap_or(self.sql)
    }

    /// Whether the field is non-null in the schema.
    pub(crate) fn type_text(&self) -> String {
        match self.shape {
            Shape::Scalar(s) => s.type_name().to_string(),
            Shape::List(s) => format!("[{}!]!", s.type_name()),
            Shape::Ref { entity, .. } => entity.to_string(),
            Shape::Derived { entity, .. } => format!("[{entity}!]!"),
        }
    }
}

/// An entity: its name, the query fields that read it, its rows and its fields.
#[derive(Debug)]
pub(crate) struct Entity {
    pub(crate) name: &'static str,
    /// The query field reading one by id (`agent`).
    pub(crate) single: &'static str,
    /// The query field reading a list (`agents`).
    pub(crate) plural: &'static str,
    /// `FROM … WHERE …` giving one row per entity; field SQL reads its aliases.
    pub(crate) from: &'static str,
    /// The columns that find one entity by an index (what refs and derived lists match on).
    pub(crate) keys: &'static [&'static str],
    /// The chain an entity is on, for the per-chain endpoint; empty for an entity over every
    /// chain, whose SQL reads the endpoint's chain (or NULL for all) as `$CHAIN`.
    pub(crate) chain: &'static str,
    pub(crate) fields: &'static [Field],
}

impl Entity {
    /// The field named `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The `id` field.
    pub(crate) fn id(&self) -> &'static Field {
        self.field("id").expect("every entity has an id")
    }
}

/// The entity named `name`.
pub(crate) fn entity(name: &str) -> Option<&'static Entity> {
    ENTITIES.iter().find(|e| e.name == name)
}

/// The entity a query field reads, and whether it reads a list. `agentMetadata_collection` is
/// `agentMetadatas` under the name some graph-node versions give it (the SDKs try both).
pub(crate) fn query_field(name: &str) -> Option<(&'static Entity, bool)> {
    let name = match name {
        "agentMetadata_collection" => "agentMetadatas",
        other => other,
    };
    ENTITIES.iter().find_map(|e| {
        if e.plural == name {
            Some((e, true))
        } else if e.single == name {
            Some((e, false))
        } else {
            None
        }
    })
}

const fn scalar(name: &'static str, kind: Scalar, sql: &'static str) -> Field {
    Field {
        name,
        shape: Shape::Scalar(kind),
        sql,
        compare: None,
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
    }
}

const fn compared(name: &'static str, kind: Scalar, sql: &'static str, by: &'static str) -> Field {
    Field {
        name,
        shape: Shape::Scalar(kind),
        sql,
        compare: Some(by),
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
    }
}

const fn list(name: &'static str, kind: Scalar, sql: &'static str) -> Field {
    Field {
        name,
        shape: Shape::List(kind),
        sql,
        compare: None,
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
    }
}

const fn reference(
    name: &'static str,
    entity: &'static str,
    sql: &'static str,
    keys: &'static [&'static str],
) -> Field {
    Field {
        name,
        shape: Shape::Ref { entity, keys },
        sql,
        compare: None,
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
    }
}

const fn derived(name: &'static str, entity: &'static str, by: &'static [&'static str]) -> Field {
    Field {
        name,
        shape: Shape::Derived { entity, by },
        sql: "",
        compare: None,
        id_parts: &[],
        member: None,
        search: None,
        member_check: None,
        indexed: false,
        correlated: None,
    }
}

// --- shared SQL --------------------------------------------------------------------------------

/// The block timestamp of block `$b` on the chain of alias `$c`.
macro_rules! block_time {
    ($c:literal, $b:literal) => {
        concat!(
            "(SELECT e.block_timestamp FROM events e WHERE e.chain_id = ",
            $c,
            ".chain_id AND e.block_number = ",
            $b,
            " LIMIT 1)"
        )
    };
}

/// The facts of the ERC-8004 token of agents row `a`.
macro_rules! of_token {
    ($t:literal) => {
        concat!(
            $t,
            ".chain_id = a.chain_id AND ",
            $t,
            ".registry = a.registry AND ",
            $t,
            ".token_id = a.token_id"
        )
    };
}

/// Feedback `f` has been revoked.
const REVOKED: &str = "EXISTS (SELECT 1 FROM feedback_revocations r
    WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id
      AND r.client = f.client AND r.feedback_index = f.feedback_index)";

/// The kind of URI `$u` is, as the subgraph names it.
macro_rules! uri_type {
    ($u:literal) => {
        concat!(
            "CASE WHEN ",
            $u,
            " IS NULL OR ",
            $u,
            " = '' THEN NULL WHEN lower(",
            $u,
            ") LIKE 'ipfs://%' OR ",
            $u,
            " LIKE '/ipfs/%' THEN 'ipfs' WHEN lower(",
            $u,
            ") LIKE 'ar://%' THEN 'arweave' WHEN lower(",
            $u,
            ") LIKE 'https://%' THEN 'https' WHEN lower(",
            $u,
            ") LIKE 'http://%' THEN 'http' WHEN lower(",
            $u,
            ") LIKE 'data:%' THEN 'data' ELSE 'unknown' END"
        )
    };
}

/// A field of registration file projection `d.projection`.
macro_rules! projected {
    ($path:literal) => {
        concat!("json_extract(d.projection, '", $path, "')")
    };
}

/// The latest URI event of the token of agents row `a` (registration or update): `$col` of it.
macro_rules! uri_event {
    ($col:literal) => {
        concat!(
            "(SELECT e.",
            $col,
            " FROM events e WHERE (e.chain_id, e.block_number, e.log_index) = (SELECT x.chain_id, x.block_number, x.log_index FROM (SELECT r.chain_id, r.block_number, r.log_index FROM identity_registrations r WHERE r.chain_id = a.chain_id AND r.registry = a.registry AND r.token_id = a.token_id UNION ALL SELECT u.chain_id, u.block_number, u.log_index FROM identity_uri_updates u WHERE u.chain_id = a.chain_id AND u.registry = a.registry AND u.token_id = a.token_id) x ORDER BY x.block_number DESC, x.log_index DESC LIMIT 1))"
        )
    };
}

/// The id of the registration file `g` of agents row `a`: the subgraph's
/// `{txHash}:{cid}` (`{txHash}:datauri:{logIndex}` for a data: URI), the URI itself in place of
/// a CID for an http(s) file.
macro_rules! regfile_id {
    () => {
        concat!(
            "'0x' || lower(hex(",
            uri_event!("tx_hash"),
            ")) || ':' || CASE WHEN lower(g.uri) LIKE 'ipfs://%' THEN substr(g.uri, 8) WHEN lower(g.uri) LIKE 'data:%' THEN 'datauri:' || ",
            uri_event!("log_index"),
            " ELSE g.uri END"
        )
    };
}

const AGENT_ID: &str = "a.chain_id || ':' || a.token_id";
const AGENT_KEY: &[&str] = &["a.agent_key"];
const AGENT_PARTS: &[Part] = &[int("a.chain_id"), text("a.token_id")];

// --- the entities ------------------------------------------------------------------------------

/// Every entity of the schema.
pub(crate) static ENTITIES: &[Entity] = &[
    Entity {
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
                "CAST(a.token_id AS INTEGER)",
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
                compare: Some(
                    "(SELECT 1 FROM agent_registrations g WHERE g.agent_key = a.agent_key)",
                ),
                id_parts: &[],
                member: None,
                search: None,
                member_check: None,
                indexed: false,
                correlated: Some(
                    "FROM agent_registrations g WHERE g.agent_key = a.agent_key AND a.source = 'erc8004'",
                ),
            },
            derived("feedback", "Feedback", &["f.chain_id || ':' || f.registry || ':' || f.token_id"]),
            derived("validations", "Validation", &["v.chain_id || ':' || v.registry || ':' || v.token_id"]),
            derived("metadata", "AgentMetadata", &["m.chain_id || ':' || m.registry || ':' || m.token_id"]),
            scalar(
                "totalFeedback",
                Scalar::BigInt,
                concat!(
                    "(SELECT count(*) FROM feedback f INDEXED BY feedback_agent WHERE ",
                    of_token!("f"),
                    " AND NOT EXISTS (SELECT 1 FROM feedback_revocations r WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index))"
                ),
            ),
            scalar(
                "lastActivity",
                Scalar::BigInt,
                concat!(
                    "max(a.registered_at, coalesce((SELECT max(f.timestamp) FROM feedback f INDEXED BY feedback_agent WHERE ",
                    of_token!("f"),
                    "), 0))"
                ),
            ),
        ],
    },
    Entity {
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
                "(g.oasf_skills != '[]' OR g.oasf_domains != '[]')",
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
    },
    Entity {
        name: "Feedback",
        single: "feedback",
        plural: "feedbacks",
        from: "FROM feedback f JOIN agents a ON a.agent_key = f.chain_id || ':' || f.registry || ':' || f.token_id
               WHERE f.feedback_index IS NOT NULL",
        keys: &["f.chain_id", "f.registry", "f.token_id", "f.client", "f.feedback_index"],
        chain: "f.chain_id",
        fields: &[
            parted(
                scalar(
                    "id",
                    Scalar::Id,
                    "f.chain_id || ':' || f.token_id || ':' || f.client || ':' || f.feedback_index",
                ),
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
                "(CAST(f.value AS REAL) / CAST('1e' || f.value_decimals AS REAL))",
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
            ),
        ],
    },
    Entity {
        name: "FeedbackResponse",
        single: "feedbackResponse",
        plural: "feedbackResponses",
        from: "FROM feedback_responses p JOIN events e ON e.chain_id = p.chain_id AND e.block_number = p.block_number AND e.log_index = p.log_index WHERE 1",
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
                &["p.chain_id", "p.registry", "p.token_id", "p.client", "p.feedback_index"],
            ),
            scalar("responder", Scalar::Bytes, "p.responder"),
            scalar("responseUri", Scalar::String, "p.response_uri"),
            scalar("responseHash", Scalar::Bytes, "p.response_hash"),
            scalar("createdAt", Scalar::BigInt, "e.block_timestamp"),
        ],
    },
    Entity {
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
    },
    Entity {
        name: "Validation",
        single: "validation",
        plural: "validations",
        from: "FROM validation_requests v JOIN agents a ON a.agent_key = v.chain_id || ':' || v.registry || ':' || v.token_id
               LEFT JOIN validation_responses s ON (s.chain_id, s.block_number, s.log_index) = (
                   SELECT s2.chain_id, s2.block_number, s2.log_index FROM validation_responses s2
                    WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash
                    ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1)
               WHERE 1",
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
    },
    Entity {
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
    },
    Entity {
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
            scalar(
                "totalFeedback",
                Scalar::BigInt,
                concat!("(SELECT count(*) FROM feedback f INDEXED BY feedback_agent WHERE ", of_token!("f"), " AND NOT ", "EXISTS (SELECT 1 FROM feedback_revocations r WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index))"),
            ),
            scalar(
                "averageFeedbackValue",
                Scalar::BigDecimal,
                concat!("coalesce((SELECT avg(CAST(f.value AS REAL) / CAST('1e' || f.value_decimals AS REAL)) FROM feedback f INDEXED BY feedback_agent WHERE ", of_token!("f"), " AND NOT EXISTS (SELECT 1 FROM feedback_revocations r WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index)), 0) || 'e-0'"),
            ),
            scalar(
                "totalValidations",
                Scalar::BigInt,
                concat!("(SELECT count(*) FROM validation_requests v WHERE ", of_token!("v"), ")"),
            ),
            scalar(
                "completedValidations",
                Scalar::BigInt,
                concat!("(SELECT count(*) FROM validation_requests v WHERE ", of_token!("v"), " AND EXISTS (SELECT 1 FROM validation_responses s WHERE s.chain_id = v.chain_id AND s.registry = v.registry AND s.request_hash = v.request_hash))"),
            ),
            scalar(
                "averageValidationScore",
                Scalar::BigDecimal,
                concat!("coalesce((SELECT avg(s.response) FROM validation_requests v JOIN validation_responses s ON (s.chain_id, s.block_number, s.log_index) = (SELECT s2.chain_id, s2.block_number, s2.log_index FROM validation_responses s2 WHERE s2.chain_id = v.chain_id AND s2.registry = v.registry AND s2.request_hash = v.request_hash ORDER BY s2.block_number DESC, s2.log_index DESC LIMIT 1) WHERE ", of_token!("v"), "), 0) || 'e-0'"),
            ),
            scalar(
                "lastActivity",
                Scalar::BigInt,
                concat!("max(a.registered_at, coalesce((SELECT max(f.timestamp) FROM feedback f INDEXED BY feedback_agent WHERE ", of_token!("f"), "), 0))"),
            ),
            scalar(
                "updatedAt",
                Scalar::BigInt,
                concat!("max(a.registered_at, coalesce((SELECT max(f.timestamp) FROM feedback f INDEXED BY feedback_agent WHERE ", of_token!("f"), "), 0))"),
            ),
        ],
    },
    Entity {
        name: "GlobalStats",
        single: "globalStats",
        plural: "globalStats_collection",
        from: "FROM (SELECT 'global' AS id) o WHERE 1",
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
    },
    Entity {
        name: "Protocol",
        single: "protocol",
        plural: "protocols",
        from: "FROM chain_cursor c WHERE 1",
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
    },
];
