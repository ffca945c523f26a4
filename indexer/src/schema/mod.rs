//! Every table of the store, declared once: its name, its columns in order with their types,
//! which of them may be NULL, its key, and a row struct with one field per column. The store's
//! writers and readers, the API's discovery reads and the subgraph catalogue name tables and
//! columns through these declarations (`schema::agents::NAME`, `schema::agents::owner`), so a
//! renamed or retyped column is a compile error where it is used, not a failing query at run
//! time; the schema test (`tests/schema_declarations.rs`) migrates a fresh store on SQLite and
//! on PostgreSQL and checks that both hold exactly what is declared here.
//!
//! The migrations (`migrations/sqlite`, `migrations/postgres`) stay the one place that says how
//! each database builds the tables: indexes, collations, SQLite's FTS5 and PostgreSQL's
//! tsvector. A column's Rust type decides its SQL type on both ([`SqlValue`]): `i64` is
//! SQLite's INTEGER and PostgreSQL's BIGINT (flags included, 0 or 1), `f64` REAL and DOUBLE
//! PRECISION, `String` TEXT, `Vec<u8>` BLOB and BYTEA; `Option<_>` may be NULL.
//!
//! To add a table: declare it in the group of the stage that writes it (one `tables!` entry),
//! and write its two migrations; the test names any difference between them and the entry.
//! Nothing else lists it: each group's `tables!` lists its own tables (`TABLES`), [`ALL`] is the
//! groups' lists one after another, and what reads every table (copying an index between
//! databases, the schema test) reads [`ALL`]. A table is copied row for row unless its
//! declaration says otherwise with its [`TableKind`]. A new group file goes into `GROUPS`.

mod agent_state;
mod cardano_facts;
mod chain_state;
mod contract_facts;
mod document_state;
mod feedback_facts;
mod identity_facts;
mod liveness_state;
mod payment_facts;
mod reputation_state;
mod row;

pub use agent_state::*;
pub use cardano_facts::*;
pub use chain_state::*;
pub use contract_facts::*;
pub use document_state::*;
pub use feedback_facts::*;
pub use identity_facts::*;
pub use liveness_state::*;
pub use payment_facts::*;
pub use reputation_state::*;
pub(crate) use row::column_list;
pub use row::{Cell, TableRow};

/// A column's type, the same on both databases (see the module's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// A 64-bit integer.
    Integer,
    /// A double-precision float.
    Real,
    /// UTF-8 text.
    Text,
    /// Bytes.
    Blob,
}

/// How a Rust field type is stored: the column's type, and whether it may be NULL.
pub trait SqlValue {
    /// The column's type.
    const TYPE: SqlType;
    /// Whether the column may be NULL.
    const NULLABLE: bool = false;
}

impl SqlValue for i64 {
    const TYPE: SqlType = SqlType::Integer;
}

impl SqlValue for f64 {
    const TYPE: SqlType = SqlType::Real;
}

impl SqlValue for String {
    const TYPE: SqlType = SqlType::Text;
}

impl SqlValue for Vec<u8> {
    const TYPE: SqlType = SqlType::Blob;
}

impl<T: SqlValue> SqlValue for Option<T> {
    const TYPE: SqlType = T::TYPE;
    const NULLABLE: bool = true;
}

/// What a table is for the databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// An ordinary table, the same on both.
    Table,
    /// A full-text index of rows kept elsewhere: an FTS5 virtual table on SQLite (its columns
    /// untyped), a table with a GIN-indexed search column on PostgreSQL (which holds that
    /// column besides the declared ones). Only the declared columns are read and written.
    SearchIndex,
    /// An ordinary table whose rows the migrations' triggers write from another table's (as
    /// `agent_terms` follows `agent_skills`): nothing writes it but them, so copying an index
    /// leaves it to the target's triggers.
    KeptByTrigger,
}

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The table it belongs to.
    pub table: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: SqlType,
    /// Whether it may be NULL.
    pub nullable: bool,
}

impl Column {
    /// The column's name, for SQL text.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// `table.column`, for messages that name it.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.table, self.name)
    }
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One table: its name, its columns in the order the migrations create them, its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
    /// The columns of its primary key, in the key's order (none for a search index or a
    /// table of several rows per key, such as `document_lints`).
    pub key: &'static [&'static str],
    /// What it is for the databases.
    pub kind: TableKind,
}

impl Table {
    /// Its columns' names, comma-separated in order, for an INSERT or a SELECT of every one.
    pub fn column_list(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(Column::name).collect();
        names.join(", ")
    }

    /// The column named `name`, if it has one.
    pub fn column(&self, name: &str) -> Option<&'static Column> {
        self.columns.iter().find(|column| column.name == name)
    }
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// The groups' tables, in the order [`ALL`] lists them: each group in its declaration order.
/// Nothing depends on that order (the migrations declare no foreign keys); it is fixed so that
/// what reads every table reads them alike on every run.
const GROUPS: [&[Table]; 10] = [
    chain_state::TABLES,
    contract_facts::TABLES,
    identity_facts::TABLES,
    feedback_facts::TABLES,
    payment_facts::TABLES,
    cardano_facts::TABLES,
    agent_state::TABLES,
    document_state::TABLES,
    liveness_state::TABLES,
    reputation_state::TABLES,
];

/// Every table: the groups' tables, one group after another (group by group in the order of
/// the modules above, each group in its declaration order).
pub const ALL: &[Table] = &concatenated::<{ table_count(&GROUPS) }>(&GROUPS);

/// How many tables `groups` hold together.
const fn table_count(groups: &[&[Table]]) -> usize {
    let mut count = 0;
    let mut group = 0;
    while group < groups.len() {
        count += groups[group].len();
        group += 1;
    }
    count
}

/// The tables of `groups` one after another, `N` of them (a `const fn`, so [`ALL`] is a
/// constant; a count that is not theirs fails the build).
const fn concatenated<const N: usize>(groups: &[&[Table]]) -> [Table; N] {
    const UNSET: Table = Table {
        name: "",
        columns: &[],
        key: &[],
        kind: TableKind::Table,
    };
    let mut all = [UNSET; N];
    let mut at = 0;
    let mut group = 0;
    while group < groups.len() {
        let mut table = 0;
        while table < groups[group].len() {
            all[at] = groups[group][table];
            at += 1;
            table += 1;
        }
        group += 1;
    }
    assert!(at == N, "the groups hold another number of tables");
    all
}

/// The table named `name`, if it is declared.
pub fn table(name: &str) -> Option<&'static Table> {
    ALL.iter().find(|table| table.name == name)
}

/// A table's kind from its declaration: [`TableKind::Table`] unless one is named.
macro_rules! table_kind {
    () => {
        $crate::schema::TableKind::Table
    };
    ($kind:ident) => {
        $crate::schema::TableKind::$kind
    };
}
pub(crate) use table_kind;

/// Declares tables, each as a module named after it holding `NAME`, one [`Column`] constant
/// per column (named as the column), `TABLE` and `Row` (a [`TableRow`], read with `FromRow`):
///
/// ```text
/// tables! {
///     /// What the table holds.
///     name [key_column, ..] (as Kind)? {
///         /// What the column holds.
///         column: RustType,
///     }
/// }
/// ```
///
/// `Kind` is a [`TableKind`] (`Table` when none is named). An invocation also declares
/// `TABLES`, its tables in declaration order, for `GROUPS`: one invocation a group file.
macro_rules! tables {
    ($(
        $(#[doc = $doc:expr])*
        $table:ident [$($key:ident),*] $(as $kind:ident)? {
            $($(#[doc = $column_doc:expr])* $column:ident: $ty:ty,)*
        }
    )*) => {
        $(
            $(#[doc = $doc])*
            #[allow(non_upper_case_globals)]
            pub mod $table {
                use $crate::schema::{Column, SqlValue, Table};

                /// The table's name.
                pub const NAME: &str = stringify!($table);

                $(
                    #[doc = concat!(
                        "The column `", stringify!($table), ".", stringify!($column), "`."
                    )]
                    #[doc = ""]
                    $(#[doc = $column_doc])*
                    pub const $column: Column = Column {
                        table: NAME,
                        name: stringify!($column),
                        ty: <$ty as SqlValue>::TYPE,
                        nullable: <$ty as SqlValue>::NULLABLE,
                    };
                )*

                /// The table's declaration.
                pub const TABLE: Table = Table {
                    name: NAME,
                    columns: &[$($column),*],
                    key: &[$(stringify!($key)),*],
                    kind: $crate::schema::table_kind!($($kind)?),
                };

                /// One row, every column, read by name.
                #[derive(Debug, Clone, PartialEq)]
                pub struct Row {
                    $(
                        #[doc = concat!("`", stringify!($column), "`.")]
                        #[doc = ""]
                        $(#[doc = $column_doc])*
                        pub $column: $ty,
                    )*
                }

                impl $crate::schema::TableRow for Row {
                    const TABLE: Table = TABLE;
                    const COLUMNS: &'static str = $crate::schema::column_list!($($column),*);

                    fn cells(self) -> Vec<$crate::schema::Cell> {
                        vec![$(self.$column.into()),*]
                    }
                }

                impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for Row {
                    fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
                        use sqlx::Row as _;
                        Ok(Self {
                            $($column: row.try_get(stringify!($column))?,)*
                        })
                    }
                }
            }
        )*

        /// The group's tables, in declaration order (`pub(super)`: `schema::GROUPS` gathers them,
        /// and the groups' `TABLES` would clash in `schema`'s glob re-exports).
        pub(super) const TABLES: &[$crate::schema::Table] = &[$($table::TABLE),*];
    };
}
pub(crate) use tables;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_listed_once_and_its_key_is_its_own_non_null_columns() {
        let mut names: Vec<&str> = ALL.iter().map(|table| table.name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a table listed twice in schema::ALL");
        for table in ALL {
            for key in table.key {
                let column = table
                    .column(key)
                    .unwrap_or_else(|| panic!("{}: key column {key} is not declared", table.name));
                assert!(
                    !column.nullable,
                    "{}.{key} is a key but may be NULL",
                    table.name
                );
            }
            for column in table.columns {
                assert_eq!(column.table, table.name);
            }
        }
    }

    #[test]
    fn all_is_the_groups_one_after_another() {
        assert_eq!(ALL, GROUPS.concat());
        assert_eq!(ALL.first().map(|t| t.name), Some(chain_cursor::NAME));
        assert_eq!(ALL.last().map(|t| t.name), Some(trust_rollout::NAME));
        assert_eq!(agent_terms::TABLE.kind, TableKind::KeptByTrigger);
        assert_eq!(agent_search::TABLE.kind, TableKind::SearchIndex);
    }

    #[test]
    fn a_declaration_names_its_columns_in_order() {
        assert_eq!(
            chain_cursor::TABLE.column_list(),
            "chain_id, name, indexed_block, indexed_hash, finalized_block, head_block, settled_block"
        );
        let hash = table("chain_cursor").and_then(|t| t.column("indexed_hash"));
        assert_eq!(
            hash.map(|c| (c.ty, c.nullable)),
            Some((SqlType::Text, true))
        );
        assert_eq!(format!("{}", agents::owner), "owner");
        assert_eq!(table("agents").map(|t| t.key), Some(&["agent_key"][..]));
        assert_eq!(table("no_such_table"), None);
    }
}
