//! A declared table's row as values to write: [`Cell`], one column's value typed as the column
//! is declared, and [`TableRow`], which every `tables!` row struct implements, so a writer
//! builds the struct (every column named, each of its declared type) and the store binds its
//! cells in column order. A renamed, retyped, added or removed column is then a compile error
//! in the writer, not a failing INSERT at run time.

use super::Table;

/// One column's value, of one of the declared column types ([`super::SqlType`]); `None` is
/// NULL.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// An `i64` column's value.
    Integer(Option<i64>),
    /// An `f64` column's value.
    Real(Option<f64>),
    /// A `String` column's value.
    Text(Option<String>),
    /// A `Vec<u8>` column's value.
    Blob(Option<Vec<u8>>),
}

macro_rules! cell_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<$ty> for Cell {
                fn from(value: $ty) -> Self {
                    Cell::$variant(Some(value))
                }
            }

            impl From<Option<$ty>> for Cell {
                fn from(value: Option<$ty>) -> Self {
                    Cell::$variant(value)
                }
            }
        )*
    };
}

cell_from! {
    i64 => Integer,
    f64 => Real,
    String => Text,
    Vec<u8> => Blob,
}

/// A row of a declared table, written whole.
pub trait TableRow {
    /// The table it is a row of.
    const TABLE: Table;
    /// The table's columns, comma-separated in order (as [`Table::column_list`] writes them).
    const COLUMNS: &'static str;

    /// Its values in column order.
    fn cells(self) -> Vec<Cell>;
}

/// The columns `a, b, c` as the text `"a, b, c"`, at compile time.
macro_rules! column_list {
    ($first:ident $(, $rest:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($rest))*)
    };
}
pub(crate) use column_list;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ALL, identity_metadata};

    #[test]
    fn a_row_lists_its_columns_as_the_declaration_does_and_its_cells_in_that_order() {
        assert_eq!(
            <identity_metadata::Row as TableRow>::COLUMNS,
            identity_metadata::TABLE.column_list()
        );
        let row = identity_metadata::Row {
            chain_id: 1,
            registry: "0xr".into(),
            token_id: "7".into(),
            key: "agentWallet".into(),
            value: vec![1, 2],
            block_number: 10,
            log_index: 3,
        };
        assert_eq!(
            row.cells(),
            [
                Cell::Integer(Some(1)),
                Cell::Text(Some("0xr".into())),
                Cell::Text(Some("7".into())),
                Cell::Text(Some("agentWallet".into())),
                Cell::Blob(Some(vec![1, 2])),
                Cell::Integer(Some(10)),
                Cell::Integer(Some(3)),
            ]
        );
        assert!(ALL.iter().all(|table| !table.columns.is_empty()));
    }
}
