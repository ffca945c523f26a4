//! Rows the store reads, each declared once with the SQL of its fields.
//!
//! [`packed_row!`] declares a struct and, field by field, the SQL that produces it: its select
//! list is the fields' SQL in the fields' order, so the two cannot fall out of step. Packed rows
//! (see `store::sql`) arrive as JSON arrays of plain values on SQLite and as rows of them on
//! PostgreSQL (`store::row_values`); serde decodes a struct from either by position, so a
//! declared struct costs no more than the tuple it replaces. A field's SQL is a plain value:
//! an integer, a float, text or NULL (never a PostgreSQL `numeric`, `jsonb` or array, which
//! sqlx's `Any` driver cannot return, nor a BLOB, which SQLite cannot put in JSON). The same struct
//! can also be read row by row with `sqlx::FromRow` (by field name) through
//! [`PackedRow::named_select_list`], which names each expression as its field.

use crate::schema::Column;
use crate::store::Dialect;
use serde::de::DeserializeOwned;

/// A struct declared with [`packed_row!`]: its select list, in the order of its fields.
pub(crate) trait PackedRow: DeserializeOwned {
    /// The fields' SQL, comma-separated in order: the columns of a packed row.
    fn select_list(dialect: Dialect) -> String;

    /// [`Self::select_list`] with each expression named as its field (`expression AS field`,
    /// or the bare column when it already has the field's name), for a read by name.
    fn named_select_list(dialect: Dialect) -> String;
}

/// The SQL of one field: a declared column, a fixed expression, or [`PerDialect`].
pub(crate) trait FieldSql {
    /// The expression as `dialect` spells it.
    fn sql(&self, dialect: Dialect) -> String;
}

impl FieldSql for Column {
    fn sql(&self, _: Dialect) -> String {
        self.name.to_string()
    }
}

impl FieldSql for &str {
    fn sql(&self, _: Dialect) -> String {
        (*self).to_string()
    }
}

/// A field whose SQL differs between the databases (such as hex of a BLOB).
pub(crate) struct PerDialect(pub(crate) fn(Dialect) -> String);

impl FieldSql for PerDialect {
    fn sql(&self, dialect: Dialect) -> String {
        (self.0)(dialect)
    }
}

/// `sql` named `field` in a select list.
pub(crate) fn named(sql: String, field: &str) -> String {
    if sql == field {
        sql
    } else {
        format!("{sql} AS {field}")
    }
}

/// Declares a row struct (`#[derive(serde::Deserialize)]`) and its [`PackedRow`] impl, each
/// field with its SQL (anything [`FieldSql`]: a `schema` column, a `&str`, a [`PerDialect`]):
///
/// ```text
/// packed_row! {
///     /// What the row is.
///     struct Registration {
///         token_id: String = identity_registrations::token_id,
///         x402: i64 = "CASE WHEN scheme IS NULL THEN 0 ELSE 1 END",
///     }
/// }
/// ```
macro_rules! packed_row {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_attr:meta])* $field_vis:vis $field:ident: $ty:ty = $sql:expr,)*
        }
    ) => {
        $(#[$attr])*
        #[derive(serde::Deserialize)]
        $vis struct $name {
            $($(#[$field_attr])* $field_vis $field: $ty,)*
        }

        impl $crate::store::packed_row::PackedRow for $name {
            fn select_list(dialect: $crate::store::Dialect) -> String {
                [$($crate::store::packed_row::FieldSql::sql(&$sql, dialect)),*].join(", ")
            }

            fn named_select_list(dialect: $crate::store::Dialect) -> String {
                [$($crate::store::packed_row::named(
                    $crate::store::packed_row::FieldSql::sql(&$sql, dialect),
                    stringify!($field),
                )),*]
                .join(", ")
            }
        }
    };
}
pub(crate) use packed_row;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::identity_metadata;

    packed_row! {
        /// A row with each kind of field SQL.
        struct Example {
            token_id: String = identity_metadata::token_id,
            wallet_hex: Option<String> = PerDialect(|dialect| dialect.hex("value")),
            flag: i64 = "CASE WHEN key = 'x' THEN 1 ELSE 0 END",
        }
    }

    #[test]
    fn the_select_list_follows_the_fields_and_the_struct_reads_from_an_array() {
        assert_eq!(
            Example::select_list(Dialect::Sqlite),
            "token_id, hex(value), CASE WHEN key = 'x' THEN 1 ELSE 0 END"
        );
        assert_eq!(
            Example::named_select_list(Dialect::Postgres),
            "token_id, upper(encode(value, 'hex')) AS wallet_hex, \
             CASE WHEN key = 'x' THEN 1 ELSE 0 END AS flag"
        );
        let row: Example = serde_json::from_str(r#"["7", null, 1]"#).expect("an array");
        assert_eq!(
            (row.token_id.as_str(), row.wallet_hex, row.flag),
            ("7", None, 1)
        );
    }
}
