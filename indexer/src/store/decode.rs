//! Reading stored values back into the chain's types, with errors that name where they failed.
//!
//! Rows come out of SQL as named structs (`sqlx::FromRow`) of the database's own types; a
//! column missing or of the wrong type is then a driver error naming the column. What those
//! structs hold (text that should be an address, an integer that should not be negative, JSON
//! that should be a projection) is turned into typed values here, and a value that does not read
//! back is [`StoreError::Corrupt`] naming the table and the column, never a panic and never a
//! silently dropped row.

use super::{StoreError, StoreResult};
use crate::primitives::{sql_int, sql_uint};
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::str::FromStr;

/// The error for `table.column` holding `value`, which does not read back because of `reason`.
pub(super) fn corrupt(table: &str, column: &str, value: &str, reason: impl Display) -> StoreError {
    StoreError::Corrupt {
        what: format!("{table}.{column} = {value:?}"),
        reason: reason.to_string(),
    }
}

/// `text`, stored in `table.column`, parsed as `T`.
pub(super) fn parse<T>(table: &str, column: &str, text: &str) -> StoreResult<T>
where
    T: FromStr,
    T::Err: Display,
{
    text.parse()
        .map_err(|error| corrupt(table, column, text, error))
}

/// [`parse`] for a column that may be NULL.
pub(super) fn parse_opt<T>(table: &str, column: &str, text: Option<&str>) -> StoreResult<Option<T>>
where
    T: FromStr,
    T::Err: Display,
{
    text.map(|text| parse(table, column, text)).transpose()
}

/// `value`, stored in `table.column`, as the unsigned number it stands for.
pub(super) fn uint(table: &str, column: &str, value: i64) -> StoreResult<u64> {
    sql_uint(value).map_err(|error| corrupt(table, column, &value.to_string(), error))
}

/// JSON stored in `table.column`, read as `T`.
pub(super) fn json<T: DeserializeOwned>(table: &str, column: &str, text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|error| corrupt(table, column, text, error))
}

/// `value` as the database stores it, for `what` (a column or a parameter), or an error when it
/// does not fit.
pub(super) fn int(what: &str, value: u64) -> StoreResult<i64> {
    sql_int(value).map_err(|source| StoreError::OutOfRange {
        what: what.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::Address;

    #[test]
    fn a_value_that_does_not_read_back_names_its_table_and_column() {
        let error = parse::<Address>("block_window", "hash", "0xnope").expect_err("not an address");
        let text = error.to_string();
        assert!(text.contains("block_window.hash"), "{text}");
        assert!(text.contains("0xnope"), "{text}");
        let error = uint("chain_cursor", "head_block", -5).expect_err("negative");
        assert!(
            error.to_string().contains("chain_cursor.head_block"),
            "{error}"
        );
        let error = json::<Vec<u8>>("documents", "projection", "{").expect_err("not JSON");
        assert!(
            error.to_string().contains("documents.projection"),
            "{error}"
        );
        assert!(int("block", u64::MAX).is_err());
    }

    #[test]
    fn good_values_read_back() {
        assert_eq!(uint("t", "c", 7).ok(), Some(7));
        assert_eq!(parse_opt::<u64>("t", "c", None).ok(), Some(None));
        assert_eq!(json::<Vec<u8>>("t", "c", "[1,2]").ok(), Some(vec![1, 2]));
        assert_eq!(int("block", 9).ok(), Some(9));
    }
}
