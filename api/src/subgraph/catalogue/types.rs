//! What the catalogue is made of: an entity with its rows' SQL and its fields, each field's
//! graph-node type and the SQL that reads, compares and finds it, and the index that holds its
//! rows in a field's order.

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
    /// `Int8`: a 64-bit integer, sent as a decimal string (timeseries and aggregation ids and
    /// counts).
    Int8,
    /// `Timestamp`: microseconds since the Unix epoch, sent as a decimal string.
    Timestamp,
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
            Scalar::Int8 => "Int8",
            Scalar::Timestamp => "Timestamp",
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
/// where an index holds it. The index is named (SQLite's `INDEXED BY`, which
/// `Dialect::statement` drops for PostgreSQL): without statistics SQLite prefers the primary key's `chain_id` prefix to
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
    /// For text, SQL true for (at least) the rows whose text holds the piece of text bound to
    /// its `?` (as `Dialect::substring_pattern` writes it): a trigram index narrows `_contains`
    /// before the exact test.
    pub(crate) search: Option<&'static str>,
    /// For a list with `member`, the same test for one row already found (a correlated lookup
    /// rather than the list of every row holding the value).
    pub(crate) member_check: Option<&'static str>,
    /// Whether an index finds rows by this field's value (equality and `_in`).
    pub(crate) indexed: bool,
    /// For a reference, `FROM … WHERE …` reading the referenced row of the row at hand (it may
    /// name this entity's aliases), for nested filters checked row by row; the answer reads
    /// the referenced row's fields through it too, in the row at hand's own statement. The
    /// reference's `sql` is then the target's `id` read from these rows, so that the reference
    /// is null exactly when the row read is absent or its id null (`catalogue/tests.rs`).
    pub(crate) correlated: Option<&'static str>,
    /// An index holding the entity's rows in this field's order, for root lists in that order.
    pub(crate) walk: Option<&'static Walk>,
}

/// An index holding an entity's rows in the order of one of its fields: a root list in that
/// order whose filter finds no rows by an index of its own (no clause narrows them down) reads
/// its page's keys walking the index, testing each row it passes, and stops at the page rather
/// than sorting every row the filter keeps. Ties on the field are still broken by `id`, sorted
/// among the rows of each tie only.
#[derive(Debug)]
pub(crate) struct Walk {
    /// `FROM … WHERE …` giving the same rows as the entity's `from` (and its aliases), read
    /// through the index first.
    pub(crate) from: &'static str,
    /// The field's value as the index holds it, which the walk orders by.
    pub(crate) by: &'static str,
}

/// One `:`-separated part of an id and the column that holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub(crate) sql: &'static str,
    /// Whether the column holds an integer (else text).
    pub(crate) integer: bool,
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

    /// Whether it is an aggregation (graph-node's `@aggregation`): a list read at an
    /// `interval`, its rows' SQL reading the interval's seconds as `$INTERVAL` and whether the
    /// bucket still open counts as `$CURRENT` (see `plan::selection`).
    pub(crate) fn is_aggregation(&self) -> bool {
        self.from.contains(INTERVAL)
    }
}

/// Where an aggregation's SQL reads its interval's length in seconds.
pub(crate) const INTERVAL: &str = "$INTERVAL";
/// Where an aggregation's SQL reads 1 to count the bucket still open, 0 to leave it out.
pub(crate) const CURRENT: &str = "$CURRENT";
