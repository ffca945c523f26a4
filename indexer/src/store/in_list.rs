//! Lists of bound values (`IN (?, ?, …)`), written in few shapes.
//!
//! sqlx keeps each connection's compiled statements by their text (up to 100), and SQLite
//! compiles a list of bound values into the statement's program, one step per value. A list
//! written with exactly as many placeholders as values makes every new count a new text and a
//! new program as long as its list: a connection that looks up a few hundred keys at a time
//! ends up holding a hundred such programs, and the heap of a long-running indexer grows by tens
//! of megabytes of them (a four-hour soak: 17.5 MiB of SQLite's peak were IN lists).
//!
//! So a list is padded to the next power of two by repeating its last value: duplicates change
//! nothing in `IN`, `NOT IN` or a `VALUES` list tested with `IN`, and a site that binds at most
//! `n` values writes at most `log2(n) + 1` texts, each compiled once per connection and kept.

use sqlx::{Any, QueryBuilder};

/// How many values a list of `len` is written with: the next power of two (0 stays 0).
pub fn padded_len(len: usize) -> usize {
    if len == 0 { 0 } else { len.next_power_of_two() }
}

/// `items` followed by copies of its last item up to [`padded_len`].
pub fn padded<T: Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.into_iter().collect();
    if let Some(last) = items.last().cloned() {
        items.resize(padded_len(items.len()), last);
    }
    items
}

/// Appends ` IN (?, ?, …)`, the items padded (see the module header). An empty list is written
/// as `IN ()`, which SQLite reads as false and PostgreSQL refuses: callers skip empty lists.
pub fn push_in<'a, T>(query: &mut QueryBuilder<'a, Any>, items: impl IntoIterator<Item = T>)
where
    T: 'a + Clone + sqlx::Encode<'a, Any> + sqlx::Type<Any>,
{
    query.push(" IN (");
    let mut list = query.separated(", ");
    for item in padded(items) {
        list.push_bind(item);
    }
    query.push(") ");
}

#[cfg(test)]
mod tests {
    use super::{padded, padded_len, push_in};
    use sqlx::{Any, QueryBuilder};
    use std::collections::BTreeSet;

    #[test]
    fn lengths_round_up_to_powers_of_two() {
        let lengths: Vec<usize> = [0, 1, 2, 3, 4, 5, 8, 9, 500, 512, 513]
            .into_iter()
            .map(padded_len)
            .collect();
        assert_eq!(lengths, [0, 1, 2, 4, 4, 8, 8, 16, 512, 512, 1024]);
        assert_eq!(padded(["a", "b", "c"]), ["a", "b", "c", "c"]);
        assert!(padded(Vec::<&str>::new()).is_empty());
    }

    /// Every count of keys from 1 to 500 is written as one of ten statement texts.
    #[test]
    fn counts_share_few_texts() {
        let texts: BTreeSet<String> = (1..=500)
            .map(|count| {
                let mut query = QueryBuilder::<Any>::new("SELECT 1 WHERE x");
                push_in(&mut query, (0..count).map(|n| n as i64));
                query.sql().to_string()
            })
            .collect();
        assert_eq!(texts.len(), 10, "1, 2, 4, … 512 placeholders");
    }

    /// The repeated values change no answer: a padded list finds exactly the rows listed.
    #[tokio::test]
    async fn padding_changes_no_answer() {
        crate::store::install_drivers();
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect("sqlite::memory:")
            .await
            .expect("an in-memory database");
        sqlx::query("CREATE TABLE t (k INTEGER)")
            .execute(&mut conn)
            .await
            .expect("the table");
        sqlx::query("INSERT INTO t VALUES (1), (2), (3), (4), (5), (6)")
            .execute(&mut conn)
            .await
            .expect("the rows");
        for (negate, expected) in [("", vec![1, 3, 5]), ("NOT", vec![2, 4, 6])] {
            let mut query = QueryBuilder::<Any>::new(format!("SELECT k FROM t WHERE k {negate}"));
            push_in(&mut query, [1_i64, 3, 5]);
            query.push("ORDER BY k");
            assert_eq!(
                query.sql().matches('?').count(),
                4,
                "three values, four places"
            );
            let found: Vec<i64> = query
                .build_query_scalar()
                .fetch_all(&mut conn)
                .await
                .expect("the lookup runs");
            assert_eq!(found, expected);
        }
    }
}
