//! Small SQL-building helpers the store's modules share.

use sqlx::{QueryBuilder, Sqlite};

/// Appends ` IN (?, ?, …)` with one bound parameter per item.
pub(super) fn push_in<'a, T>(
    query: &mut QueryBuilder<'a, Sqlite>,
    items: impl IntoIterator<Item = T>,
) where
    T: 'a + sqlx::Encode<'a, Sqlite> + sqlx::Type<Sqlite>,
{
    query.push(" IN (");
    let mut list = query.separated(", ");
    for item in items {
        list.push_bind(item);
    }
    query.push(") ");
}
