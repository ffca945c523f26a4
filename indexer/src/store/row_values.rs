//! Decoding a database row with serde, as a packed row's JSON array is decoded (`store::sql`):
//! the row's values in column order make the sequence a [`packed_row!`] struct (or a tuple)
//! is read from by position, so one declaration serves both ways of reading.
//!
//! [`packed_row!`]: super::packed_row::packed_row

use serde::de::value::Error;
use serde::de::{self, DeserializeOwned, DeserializeSeed, SeqAccess, Visitor};
use sqlx::Column as _;
use sqlx::any::AnyRow;
use sqlx_core::any::{AnyColumn, AnyValue, AnyValueKind};
use std::borrow::Cow;

/// How a row's values are grouped into what is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Every value in turn: a row of `T`'s fields.
    Flat,
    /// The first `n` values in turn, then the rest as one nested sequence: `(i64, i64, T)` read
    /// from `block_number, log_index, <T's fields>` with `n` = 2.
    Leading(usize),
}

/// A row that does not fit what it is decoded as.
#[derive(Debug, thiserror::Error)]
#[error("the row does not fit its struct: {0}")]
pub(super) struct RowMismatch(Error);

/// Decodes `row` as `T`, its values grouped by `shape`; the error names the column whose value
/// did not fit, when a value did not.
pub(super) fn from_row<T: DeserializeOwned>(row: AnyRow, shape: Shape) -> Result<T, RowMismatch> {
    let AnyRow {
        columns, values, ..
    } = row;
    T::deserialize(Values {
        values: values.into_iter(),
        columns: &columns,
        shape,
        first: 0,
        taken: 0,
    })
    .map_err(RowMismatch)
}

/// A run of a row's values, read as a sequence.
struct Values<'c> {
    values: std::vec::IntoIter<AnyValue>,
    /// The row's columns, to name one in an error.
    columns: &'c [AnyColumn],
    shape: Shape,
    /// The place in the row of the run's first value.
    first: usize,
    /// Values handed out so far, at this level.
    taken: usize,
}

impl Values<'_> {
    /// `error`, naming the column of the value at `place` in the run.
    fn at(&self, place: usize, error: Error) -> Error {
        let index = self.first + place;
        match self.columns.get(index) {
            Some(column) => de::Error::custom(format_args!(
                "column {index} (`{}`): {error}",
                column.name()
            )),
            None => de::Error::custom(format_args!("column {index}: {error}")),
        }
    }
}

impl<'de> de::Deserializer<'de> for Values<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Error> {
        let value = visitor.visit_seq(&mut self)?;
        match self.values.len() {
            0 => Ok(value),
            left => Err(de::Error::custom(format_args!(
                "the row has {left} more value(s) than its struct has fields"
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de> SeqAccess<'de> for Values<'_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        if self.shape == Shape::Leading(self.taken) {
            // The rest of the row is the one nested element.
            let rest = Values {
                values: std::mem::take(&mut self.values),
                columns: self.columns,
                shape: Shape::Flat,
                first: self.first + self.taken,
                taken: 0,
            };
            self.taken += 1;
            return seed.deserialize(rest).map(Some);
        }
        let Some(value) = self.values.next() else {
            return Ok(None);
        };
        let place = self.taken;
        self.taken += 1;
        seed.deserialize(Value(value.kind))
            .map(Some)
            .map_err(|error| self.at(place, error))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(match self.shape {
            Shape::Leading(n) if self.taken <= n => n + 1 - self.taken,
            _ => self.values.len(),
        })
    }
}

/// One value of a row.
struct Value(AnyValueKind<'static>);

impl<'de> de::Deserializer<'de> for Value {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            AnyValueKind::Null(_) => visitor.visit_none(),
            AnyValueKind::Bool(b) => visitor.visit_bool(b),
            AnyValueKind::SmallInt(n) => visitor.visit_i64(n.into()),
            AnyValueKind::Integer(n) => visitor.visit_i64(n.into()),
            AnyValueKind::BigInt(n) => visitor.visit_i64(n),
            AnyValueKind::Real(x) => visitor.visit_f64(x.into()),
            AnyValueKind::Double(x) => visitor.visit_f64(x),
            AnyValueKind::Text(Cow::Owned(text)) => visitor.visit_string(text),
            AnyValueKind::Text(Cow::Borrowed(text)) => visitor.visit_str(text),
            AnyValueKind::Blob(Cow::Owned(bytes)) => visitor.visit_byte_buf(bytes),
            AnyValueKind::Blob(Cow::Borrowed(bytes)) => visitor.visit_bytes(bytes),
            // The enum is non-exhaustive; a kind sqlx adds later is refused by name.
            other => Err(de::Error::custom(format_args!(
                "a value of a kind this reader does not know: {other:?}"
            ))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            AnyValueKind::Null(_) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// A row of `values` as the driver would return it, its columns named `c0`, `c1`, …: for tests.
#[cfg(test)]
pub(super) fn row_of(values: Vec<AnyValueKind<'static>>) -> AnyRow {
    use sqlx_core::any::{AnyTypeInfo, AnyTypeInfoKind};
    let columns = (0..values.len())
        .map(|ordinal| AnyColumn {
            ordinal,
            name: sqlx_core::ext::ustr::UStr::new(&format!("c{ordinal}")),
            type_info: AnyTypeInfo {
                kind: AnyTypeInfoKind::Null,
            },
        })
        .collect();
    AnyRow {
        column_names: Default::default(),
        columns,
        values: values.into_iter().map(|kind| AnyValue { kind }).collect(),
    }
}

#[cfg(test)]
#[path = "row_values_tests.rs"]
mod tests;
