//! The one conversion between the chain's unsigned integers and the database's signed ones.
//!
//! SQLite (and PostgreSQL) store integers as `i64`; block numbers, chain ids, timestamps and
//! counts are `u64` on the chain. A value past `i64::MAX` is never silently wrapped: writing it
//! is an [`IntOutOfRange`] error, reading a negative one back is too. An upper bound of a range
//! ("every block up to N") may saturate instead, with [`sql_bound`], because no row lies past
//! `i64::MAX` anyway. A number a contract chose and that is only ever compared for equality (a
//! feedback index) keeps its bits instead, with [`sql_bits`].

use std::fmt;

/// An integer that does not fit the other side of the database boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOutOfRange {
    /// A `u64` above `i64::MAX`, on its way in.
    TooLarge(u64),
    /// A negative `i64`, on its way out.
    Negative(i64),
}

impl fmt::Display for IntOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge(value) => write!(f, "{value} is more than the database can hold"),
            Self::Negative(value) => write!(
                f,
                "{value} is negative where a count or number was expected"
            ),
        }
    }
}

impl std::error::Error for IntOutOfRange {}

/// `value` as the database stores it, or an error when it is past `i64::MAX`.
pub fn sql_int(value: u64) -> Result<i64, IntOutOfRange> {
    i64::try_from(value).map_err(|_| IntOutOfRange::TooLarge(value))
}

/// A stored integer as the chain counts it, or an error when it is negative.
pub fn sql_uint(value: i64) -> Result<u64, IntOutOfRange> {
    u64::try_from(value).map_err(|_| IntOutOfRange::Negative(value))
}

/// A u64 a contract chose (a feedback index), stored by its bits: values past `i64::MAX` read
/// back negative. Only for numbers compared for equality, never ordered or counted; a contract
/// may emit any u64, and refusing one would stop the chain on the contract's whim.
pub fn sql_bits(value: u64) -> i64 {
    i64::from_ne_bytes(value.to_ne_bytes())
}

/// An inclusive upper bound for a query: `value`, or `i64::MAX` when it is larger (no stored
/// row can lie beyond that, so the answer is the same).
pub fn sql_bound(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_range_cross_both_ways() {
        for value in [0, 1, 31_337, i64::MAX as u64] {
            let stored = sql_int(value).expect("fits");
            assert_eq!(sql_uint(stored), Ok(value));
        }
    }

    #[test]
    fn values_out_of_range_are_errors_not_wraps() {
        assert_eq!(sql_int(u64::MAX), Err(IntOutOfRange::TooLarge(u64::MAX)));
        assert_eq!(sql_int(1 << 63), Err(IntOutOfRange::TooLarge(1 << 63)));
        assert_eq!(sql_uint(-1), Err(IntOutOfRange::Negative(-1)));
    }

    #[test]
    fn identifiers_keep_their_bits() {
        assert_eq!(sql_bits(5), 5);
        assert_eq!(sql_bits(u64::MAX), -1);
        assert_ne!(sql_bits(u64::MAX), sql_bits(u64::MAX - 1));
    }

    #[test]
    fn bounds_saturate() {
        assert_eq!(sql_bound(u64::MAX), i64::MAX);
        assert_eq!(sql_bound(7), 7);
    }
}
