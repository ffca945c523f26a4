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
    /// entity's [`Entity::keys`]: graph-node's `@derivedFrom`. Nested filters match on `by`;
    /// a page per parent is read as `paging` says.
    Derived {
        entity: &'static str,
        by: &'static [&'static str],
        paging: &'static Paging,
    },
}

/// How one parent's page of a derived list is read: the target's rows whose `links` columns
/// hold the parent's values, found through an index led by those columns, in the page's order
/// where an index holds it. The index is named (SQLite's `INDEXED BY`, which PostgreSQL's
/// rendering drops): without statistics SQLite prefers the primary key's `chain_id` prefix to
/// an index on three or five columns, and would read the whole chain's rows for every parent.
#[derive(Debug)]
pub(crate) struct Paging {
    /// The table and alias the target's [`Entity::from`] reads first (`feedback f`), which the
    /// index is named for.
    pub(crate) table: &'static str,
    /// The target's columns a parent's values are bound to.
    pub(crate) links: &'static [Link],
    /// The index for a page in any order: led by the link columns; the page is then sorted
    /// from the parent's own rows.
    pub(crate) index: &'static str,
    /// Indexes that also hold a parent's rows in the order of a field (then `id`), for pages in
    /// that order: read in order, they stop at the page.
    pub(crate) ordered: &'static [Ordered],
}

/// An index holding a parent's rows in the order of `field`, ties broken by `id`.
#[derive(Debug)]
pub(crate) struct Ordered {
    /// The field's name.
    pub(crate) field: &'static str,
    /// The index.
    pub(crate) index: &'static str,
}

impl Paging {
    /// The index a page ordered by `field` is read by.
    pub(crate) fn index_for(&self, field: &Field) -> &'static str {
        self.ordered
            .iter()
            .find(|ordered| ordered.field == field.name)
            .map_or(self.index, |ordered| ordered.index)
    }
}

/// A column of a derived list's entity equal to an expression over its parent's row. A
/// parent's page binds the parent's values to the columns (`f.chain_id = ? AND f.registry = ?
/// AND …`), which an index finds in order, where an expression over the child's row
/// (`f.chain_id || ':' || …`) would be computed for every child and sorted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    /// The expression over the parent's row.
    pub(crate) parent: &'static str,
    /// The column of the child's row.
    pub(crate) child: &'static str,
}

/// `child` (a column of a derived list's entity) equal to `parent` (over its parent's row).
const fn link(parent: &'static str, child: &'static str) -> Link {
    Link { parent, child }
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

    /// The field's type as the schema writes it (`BigInt`, `[String!]!`, `Agent`).
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

/// A field of `shape` read by `sql`, with none of the optional behaviours.
const fn field(name: &'static str, shape: Shape, sql: &'static str) -> Field {
    Field {
        name,
        shape,
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

const fn scalar(name: &'static str, kind: Scalar, sql: &'static str) -> Field {
    field(name, Shape::Scalar(kind), sql)
}

const fn compared(name: &'static str, kind: Scalar, sql: &'static str, by: &'static str) -> Field {
    Field {
        compare: Some(by),
        ..scalar(name, kind, sql)
    }
}

const fn list(name: &'static str, kind: Scalar, sql: &'static str) -> Field {
    field(name, Shape::List(kind), sql)
}

const fn reference(
    name: &'static str,
    entity: &'static str,
    sql: &'static str,
    keys: &'static [&'static str],
) -> Field {
    field(name, Shape::Ref { entity, keys }, sql)
}

const fn derived(
    name: &'static str,
    entity: &'static str,
    by: &'static [&'static str],
    paging: &'static Paging,
) -> Field {
    field(name, Shape::Derived { entity, by, paging }, "")
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
macro_rules! revoked {
    () => {
        "EXISTS (SELECT 1 FROM feedback_revocations r WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index)"
    };
}

/// The value of feedback `f` as a number (its digits over ten to its decimals).
macro_rules! feedback_value {
    () => {
        "(CAST(f.value AS DOUBLE PRECISION) / CAST('1e' || f.value_decimals AS DOUBLE PRECISION))"
    };
}

/// Whether feedback `f` has been revoked, as 1 or 0 (a flag both databases compare alike).
const REVOKED: &str = concat!("CASE WHEN ", revoked!(), " THEN 1 ELSE 0 END");

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
/// An agent's ERC-8004 token as the columns of its facts (alias `$t`) hold it.
macro_rules! token_links {
    ($t:literal) => {
        &[
            link("a.chain_id", concat!($t, ".chain_id")),
            link("a.registry", concat!($t, ".registry")),
            link("a.token_id", concat!($t, ".token_id")),
        ]
    };
}
/// The feedback of agents row `a` not revoked: the subgraph's `totalFeedback`.
const UNREVOKED_FEEDBACK: &str = concat!(
    "(SELECT count(*) FROM feedback f INDEXED BY feedback_agent WHERE ",
    of_token!("f"),
    " AND NOT ",
    revoked!(),
    ")"
);
/// When agents row `a` registered or last received feedback: the subgraph's `lastActivity`.
const LAST_ACTIVITY: &str = concat!(
    "max(a.registered_at, coalesce((SELECT max(f.timestamp) FROM feedback f INDEXED BY feedback_agent WHERE ",
    of_token!("f"),
    "), 0))"
);
// --- the entities ------------------------------------------------------------------------------

mod agents;
mod reputation;
mod stats;

/// Every entity of the schema.
pub(crate) static ENTITIES: &[Entity] = &[
    agents::AGENT,
    agents::AGENT_REGISTRATION_FILE,
    reputation::FEEDBACK,
    reputation::FEEDBACK_RESPONSE,
    reputation::FEEDBACK_FILE,
    reputation::VALIDATION,
    agents::AGENT_METADATA,
    stats::AGENT_STATS,
    stats::GLOBAL_STATS,
    stats::PROTOCOL,
];
