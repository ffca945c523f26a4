//! The two SQL dialects the store speaks, and the few places they differ.
//!
//! Statements are written once, in the SQL both SQLite and PostgreSQL accept: numbered
//! parameters (`$1`), `ON CONFLICT … DO …`, `coalesce`, `CAST(… AS BIGINT)`. What only one of
//! them has (SQLite's scalar `max(a, b)`, its JSON functions, its index hints and the `CROSS
//! JOIN … ON` its planner keeps in order) comes from a method here, so a reader sees every
//! divergence in one file; each statement is written in its database's form when it is built,
//! and no SQL text is rewritten afterwards.
//!
//! The one exception is placeholder syntax, which sqlx's `Any` driver leaves to the caller.
//! Built statements (a [`QueryBuilder`] with one `?` per bound value) keep SQLite's anonymous
//! parameters, which it binds in constant time each: a multi-row INSERT binds tens of thousands.
//! [`Dialect::portable`] (and [`Dialect::statement`] for a string) only numbers them (`$1`,
//! `$2`, …) for PostgreSQL.

use sqlx::any::{AnyArguments, AnyTypeInfoKind};
use sqlx::{Any, AnyConnection, AnyPool, Execute, QueryBuilder};
use sqlx_core::any::AnyValueKind;
use std::borrow::Cow;

/// Which database a connection speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite, the default: one file.
    Sqlite,
    /// PostgreSQL: one writer, any number of readers on other machines.
    Postgres,
}

impl Dialect {
    /// The dialect of `url` (`sqlite://…` or `postgres://…`), if it names one.
    pub fn of_url(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Self::Postgres)
        } else {
            None
        }
    }

    /// The dialect of an open connection.
    pub fn of(conn: &AnyConnection) -> Self {
        Self::of_name(conn.backend_name())
    }

    /// The dialect of a pool's connections.
    pub fn of_pool(pool: &AnyPool) -> Self {
        Self::of_url(pool.connect_options().database_url.as_str()).unwrap_or(Self::Sqlite)
    }

    /// The statement beginning a read transaction whose every query sees one snapshot:
    /// SQLite's read transactions always do; PostgreSQL's default sees each commit as it lands,
    /// so repeatable read is asked for.
    pub fn begin_snapshot(self) -> &'static str {
        match self {
            Self::Sqlite => "BEGIN",
            Self::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        }
    }

    fn of_name(name: &str) -> Self {
        if name == "PostgreSQL" {
            Self::Postgres
        } else {
            Self::Sqlite
        }
    }

    /// `query` with its `?` parameters in this dialect's form (numbered for PostgreSQL), its
    /// bound values kept. Nothing else in its text changes: it must already be written for
    /// this dialect (index hints through [`index_hint`](Self::index_hint), ordered joins
    /// through [`join_in_order`](Self::join_in_order)).
    pub fn portable<'a>(self, mut query: QueryBuilder<'a, Any>) -> QueryBuilder<'a, Any> {
        if self == Self::Sqlite {
            return query;
        }
        let text = number_parameters(query.sql()).into_owned();
        let arguments = owned(
            query
                .build()
                .take_arguments()
                .ok()
                .flatten()
                .unwrap_or_default(),
        );
        QueryBuilder::with_arguments(text, arguments)
    }

    /// A whole statement written for this dialect but with anonymous `?` parameters, those
    /// numbered for PostgreSQL; like [`portable`](Self::portable), nothing else changes.
    pub fn statement(self, sql: &str) -> String {
        match self {
            Self::Sqlite => sql.to_string(),
            Self::Postgres => number_parameters(sql).into_owned(),
        }
    }

    /// The larger of two values: SQLite's scalar `max`, PostgreSQL's `GREATEST`.
    pub fn greatest(self, a: &str, b: &str) -> String {
        match self {
            Self::Sqlite => format!("max({a}, {b})"),
            Self::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// The smaller of two values.
    pub fn least(self, a: &str, b: &str) -> String {
        match self {
            Self::Sqlite => format!("min({a}, {b})"),
            Self::Postgres => format!("LEAST({a}, {b})"),
        }
    }

    /// A table of the members of the JSON array under `key` in the JSON text `document`, named
    /// `alias`, its one column `value`; no rows when there is no such array. For `CROSS JOIN`.
    pub fn json_items(self, document: &str, key: &str, alias: &str) -> String {
        match self {
            Self::Sqlite => format!("json_each({document}, '$.{key}') {alias}"),
            Self::Postgres => format!(
                "LATERAL jsonb_array_elements(CASE jsonb_typeof(({document})::jsonb -> '{key}') \
                 WHEN 'array' THEN ({document})::jsonb -> '{key}' ELSE '[]'::jsonb END) \
                 AS {alias}(value)"
            ),
        }
    }

    /// The member `key` of `value`, a JSON object (from [`json_items`](Self::json_items)).
    pub fn json_field(self, value: &str, key: &str) -> String {
        match self {
            Self::Sqlite => format!("json_extract({value}, '$.{key}')"),
            Self::Postgres => format!("({value} ->> '{key}')"),
        }
    }

    /// The bytes of `blob` as upper-case hex text.
    pub fn hex(self, blob: &str) -> String {
        match self {
            Self::Sqlite => format!("hex({blob})"),
            Self::Postgres => format!("upper(encode({blob}, 'hex'))"),
        }
    }

    /// A JSON object (as text) of `pairs`: `'name', value, …`.
    pub fn json_object(self, pairs: &str) -> String {
        match self {
            Self::Sqlite => format!("json_object({pairs})"),
            Self::Postgres => format!("json_build_object({pairs})::text"),
        }
    }

    /// The aggregate of one JSON object of `pairs` per row, as a JSON array (text; `[]` for no
    /// rows), in the order the rows come.
    pub fn json_objects(self, pairs: &str) -> String {
        match self {
            Self::Sqlite => format!("json_group_array(json_object({pairs}))"),
            Self::Postgres => {
                format!("coalesce(json_agg(json_build_object({pairs}))::text, '[]')")
            }
        }
    }

    /// The members of the JSON array (text) `document`, or of the array under the dotted
    /// `path` in it when `path` is not empty, as a table `alias` with one column `value`:
    /// strings as text, other members as JSON.
    pub fn json_texts(self, document: &str, path: &str, alias: &str) -> String {
        match (self, path) {
            (Self::Sqlite, "") => format!("json_each({document}) {alias}"),
            (Self::Sqlite, path) => format!("json_each({document}, '$.{path}') {alias}"),
            (Self::Postgres, path) => {
                let array = format!("({document})::jsonb #> '{{{}}}'", path.replace('.', ","));
                format!(
                    "LATERAL (SELECT CASE jsonb_typeof(m) WHEN 'string' THEN m #>> '{{}}' \
                     ELSE m::text END AS value, m AS member \
                     FROM jsonb_array_elements(CASE jsonb_typeof({array}) WHEN 'array' \
                     THEN {array} ELSE '[]'::jsonb END) AS e(m)) AS {alias}"
                )
            }
        }
    }

    /// The value at the dotted `path` of the JSON text `document` (a string as text), or NULL.
    pub fn json_path(self, document: &str, path: &str) -> String {
        match self {
            Self::Sqlite => format!("json_extract({document}, '$.{path}')"),
            Self::Postgres => format!("(({document})::jsonb #>> '{{{}}}')", path.replace('.', ",")),
        }
    }

    /// 1 when the value at the dotted `path` of the JSON text `document` is `true`, else 0.
    pub fn json_flag(self, document: &str, path: &str) -> String {
        match self {
            Self::Sqlite => format!("coalesce(json_extract({document}, '$.{path}'), 0)"),
            Self::Postgres => format!(
                "CASE WHEN ({document})::jsonb #> '{{{}}}' = 'true'::jsonb THEN 1 ELSE 0 END",
                path.replace('.', ",")
            ),
        }
    }

    /// The calendar day (`YYYY-MM-DD`, UTC) of the unix time `seconds`.
    pub fn day(self, seconds: &str) -> String {
        match self {
            Self::Sqlite => format!("date({seconds}, 'unixepoch')"),
            Self::Postgres => {
                format!("to_char(to_timestamp({seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
            }
        }
    }

    /// A random integer from 0 to `n - 1`, drawn anew for each row.
    pub fn random_below(self, n: u32) -> String {
        match self {
            Self::Sqlite => format!("(abs(random()) % {n})"),
            Self::Postgres => format!("floor(random() * {n})::bigint"),
        }
    }

    /// The decimal number the text `value` spells, as a double; NULL when it does not start
    /// with a digit (and, on PostgreSQL, when it is not a plain decimal).
    pub fn number(self, value: &str) -> String {
        match self {
            Self::Sqlite => {
                format!("CASE WHEN {value} GLOB '[0-9]*' THEN CAST({value} AS REAL) END")
            }
            Self::Postgres => format!(
                "CASE WHEN {value} ~ '^[0-9]+(\\.[0-9]+)?$' THEN CAST({value} AS DOUBLE PRECISION) END"
            ),
        }
    }

    /// A JSON array of `columns` (one row's values).
    pub fn json_array(self, columns: &str) -> String {
        match self {
            Self::Sqlite => format!("json_array({columns})"),
            Self::Postgres => format!("json_build_array({columns})"),
        }
    }

    /// The largest of `values` (two or more): SQLite's scalar `max`, which is NULL when one is
    /// NULL; PostgreSQL's `GREATEST`, which passes over NULLs.
    pub fn greatest_of(self, values: &[&str]) -> String {
        match self {
            Self::Sqlite => format!("max({})", values.join(", ")),
            Self::Postgres => format!("GREATEST({})", values.join(", ")),
        }
    }

    /// The bytes of `blob` as lower-case hex text.
    pub fn lower_hex(self, blob: &str) -> String {
        match self {
            Self::Sqlite => format!("lower(hex({blob}))"),
            Self::Postgres => format!("encode({blob}, 'hex')"),
        }
    }

    /// The JSON text `text` as a JSON value (SQLite's `json`, PostgreSQL's `jsonb`): it
    /// compares by value, and nests in a [`json_array`](Self::json_array) as JSON, not as a
    /// string.
    pub fn json(self, text: &str) -> String {
        match self {
            Self::Sqlite => format!("json({text})"),
            Self::Postgres => format!("({text})::jsonb"),
        }
    }

    /// The aggregate of `value` over the rows, as a JSON value of an array (`[]` for no rows),
    /// in the order the rows come.
    pub fn json_aggregate(self, value: &str) -> String {
        match self {
            Self::Sqlite => format!("json_group_array({value})"),
            Self::Postgres => format!("coalesce(jsonb_agg({value}), '[]'::jsonb)"),
        }
    }

    /// A table function of the members of the JSON array (text) `array`, one column `value`:
    /// strings as text, numbers as numbers on SQLite and as their text on PostgreSQL. For a
    /// `FROM`, an alias after it.
    pub fn json_elements(self, array: &str) -> String {
        match self {
            Self::Sqlite => format!("json_each({array})"),
            Self::Postgres => format!("jsonb_array_elements_text(({array})::jsonb)"),
        }
    }

    /// The 1-based place of the first `needle` in `haystack` (0 when there is none).
    pub fn position(self, haystack: &str, needle: &str) -> String {
        match self {
            Self::Sqlite => format!("instr({haystack}, {needle})"),
            Self::Postgres => format!("strpos({haystack}, {needle})"),
        }
    }

    /// True for (at least) the rows of a substring-indexed text table whose `column` holds the
    /// text of `pattern`, a value made by [`substring_pattern`](Self::substring_pattern): an
    /// FTS5 trigram `MATCH` on SQLite, a trigram-indexed `ILIKE` on PostgreSQL. Both ignore case.
    pub fn substring_match(self, column: &str, pattern: &str) -> String {
        match self {
            Self::Sqlite => format!("{column} MATCH {pattern}"),
            Self::Postgres => format!("{column} ILIKE {pattern}"),
        }
    }

    /// The value bound as the pattern of [`substring_match`](Self::substring_match) for text
    /// holding `text`: an FTS5 phrase (`"text"`, inner quotes doubled) on SQLite, a LIKE
    /// pattern (`%text%`, `\`, `%` and `_` escaped) on PostgreSQL.
    pub fn substring_pattern(self, text: &str) -> String {
        self.substring_pattern_of(&[text])
    }

    /// The pattern of [`substring_match`](Self::substring_match) for text holding every one of
    /// `pieces` (on PostgreSQL in their order): FTS5 phrases on SQLite, `%a%b%` on PostgreSQL.
    pub fn substring_pattern_of(self, pieces: &[&str]) -> String {
        match self {
            Self::Sqlite => pieces
                .iter()
                .map(|piece| format!("\"{}\"", piece.replace('"', "\"\"")))
                .collect::<Vec<_>>()
                .join(" "),
            Self::Postgres => {
                let escaped: Vec<String> = pieces
                    .iter()
                    .map(|piece| {
                        piece
                            .replace('\\', "\\\\")
                            .replace('%', "\\%")
                            .replace('_', "\\_")
                    })
                    .collect();
                format!("%{}%", escaped.join("%"))
            }
        }
    }

    /// SQLite's hint to read a table through the index `index` (` INDEXED BY index`, after the
    /// table's alias); nothing on PostgreSQL, whose planner keeps statistics of its own.
    pub fn index_hint(self, index: &str) -> String {
        match self {
            Self::Sqlite => format!(" INDEXED BY {index}"),
            Self::Postgres => String::new(),
        }
    }

    /// The join that reads its tables in the order they are written, with an `ON`: SQLite's
    /// `CROSS JOIN` (which its planner does not reorder), PostgreSQL's plain `JOIN`. (A `CROSS
    /// JOIN` without `ON`, of a table function such as [`json_items`](Self::json_items), is the
    /// same on both and written as it is.)
    pub fn join_in_order(self) -> &'static str {
        match self {
            Self::Sqlite => "CROSS JOIN",
            Self::Postgres => "JOIN",
        }
    }

    /// A JSON value the statement returns, as text both drivers read (SQLite's JSON is text
    /// already).
    pub fn json_as_text(self, json: &str) -> String {
        match self {
            Self::Sqlite => json.to_string(),
            Self::Postgres => format!("CAST({json} AS TEXT)"),
        }
    }
}

/// `arguments` for PostgreSQL, with every text and byte value copied, so they outlive the
/// builder they were taken from. (The value list is public, though hidden from sqlx's
/// documentation.)
fn owned(arguments: AnyArguments<'_>) -> AnyArguments<'static> {
    let mut copy = AnyArguments::default();
    copy.values.0 = arguments
        .values
        .0
        .into_iter()
        .map(|value| match value {
            // sqlx 0.8's PostgreSQL side declares a NULL double as a float4 (and a NULL real as
            // a float8): a statement first prepared with a NULL there then refuses the doubles
            // of later rows ("incorrect binary data format"). Swapped here, it declares float8.
            AnyValueKind::Null(AnyTypeInfoKind::Double) => {
                AnyValueKind::Null(AnyTypeInfoKind::Real)
            }
            AnyValueKind::Null(kind) => AnyValueKind::Null(kind),
            AnyValueKind::Bool(v) => AnyValueKind::Bool(v),
            AnyValueKind::SmallInt(v) => AnyValueKind::SmallInt(v),
            AnyValueKind::Integer(v) => AnyValueKind::Integer(v),
            AnyValueKind::BigInt(v) => AnyValueKind::BigInt(v),
            AnyValueKind::Real(v) => AnyValueKind::Real(v),
            AnyValueKind::Double(v) => AnyValueKind::Double(v),
            AnyValueKind::Text(v) => AnyValueKind::Text(Cow::Owned(v.into_owned())),
            AnyValueKind::Blob(v) => AnyValueKind::Blob(Cow::Owned(v.into_owned())),
            // A kind added by a later sqlx: bound as NULL would be wrong, so refuse loudly.
            #[allow(unreachable_patterns)]
            other => panic!("sqlx added a value kind the store does not copy: {other:?}"),
        })
        .collect();
    copy
}

/// `sql` with each `?` outside a quoted literal replaced by `$1`, `$2`, … in order.
fn number_parameters(sql: &str) -> Cow<'_, str> {
    if !sql.contains('?') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + sql.len() / 4);
    let mut next = 0_usize;
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                next += 1;
                out.push('$');
                out.push_str(&next.to_string());
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_numbered_in_order_and_literals_are_left_alone() {
        assert_eq!(
            number_parameters("SELECT ? FROM t WHERE a = ? AND b = 'why?' AND c IN (?, ?)"),
            "SELECT $1 FROM t WHERE a = $2 AND b = 'why?' AND c IN ($3, $4)"
        );
        assert!(matches!(number_parameters("SELECT 1"), Cow::Borrowed(_)));
    }

    #[test]
    fn numbering_parameters_leaves_the_rest_of_the_text_alone() {
        let sql = "SELECT a FROM t INDEXED BY t_agent CROSS JOIN u ON u.k = t.k WHERE a = ?";
        assert_eq!(
            Dialect::Postgres.statement(sql),
            "SELECT a FROM t INDEXED BY t_agent CROSS JOIN u ON u.k = t.k WHERE a = $1"
        );
        assert_eq!(Dialect::Sqlite.statement(sql), sql);
    }

    #[test]
    fn index_hints_and_ordered_joins_are_written_per_dialect() {
        let from = |dialect: Dialect| {
            format!(
                "FROM t x{} {} u ON u.k = x.k",
                dialect.index_hint("t_agent"),
                dialect.join_in_order()
            )
        };
        assert_eq!(
            from(Dialect::Sqlite),
            "FROM t x INDEXED BY t_agent CROSS JOIN u ON u.k = x.k"
        );
        assert_eq!(from(Dialect::Postgres), "FROM t x JOIN u ON u.k = x.k");
    }

    #[test]
    fn urls_name_their_dialect() {
        assert_eq!(Dialect::of_url("sqlite://a.db"), Some(Dialect::Sqlite));
        assert_eq!(
            Dialect::of_url("postgres://u:p@127.0.0.1:5432/db"),
            Some(Dialect::Postgres)
        );
        assert_eq!(
            Dialect::of_url("postgresql://127.0.0.1/db"),
            Some(Dialect::Postgres)
        );
        assert_eq!(Dialect::of_url("mysql://x"), None);
    }
}
