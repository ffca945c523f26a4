//! Pages of many parents' lists in one statement: one `UNION ALL` branch per parent, each
//! `SELECT * FROM (… WHERE <this parent> ORDER BY … LIMIT n) AS page{i}`. Every branch reads its
//! parent's page through an index led by the parent's columns and stops after its `n` rows,
//! however long the parent's list: an agent sent a million feedback costs a page like any
//! other. The alternative, one statement ranking every child of every parent
//! (`ROW_NUMBER() OVER (PARTITION BY parent …)`) and keeping the first ranks, reads and sorts
//! every child before the page is cut. The GraphQL relations (`activity`) and the subgraph's
//! derived lists both build their statements here.

use sqlx::{Any, QueryBuilder};

/// Parents per statement: each is one `UNION ALL` branch with a handful of bound values, and
/// SQLite allows 500 branches in one compound select.
pub(crate) const PARENTS_PER_STATEMENT: usize = 100;

/// Something SQL text is appended to: sqlx's `QueryBuilder`, or the subgraph's own builder.
pub(crate) trait SqlText {
    /// Appends `text`.
    fn push_text(&mut self, text: &str);
}

impl SqlText for QueryBuilder<'_, Any> {
    fn push_text(&mut self, text: &str) {
        self.push(text);
    }
}

/// Appends to `query` one branch per parent of `parents`, joined by `UNION ALL`: `SELECT * FROM
/// (`, what `page` writes for the parent (given its place among `parents`: its select, its
/// parent's condition, its order and its `LIMIT`), then `) AS page{i}`. The branches come back
/// in no promised order: a caller that needs one orders the union.
pub(crate) fn union_of_pages<Q: SqlText, P>(
    query: &mut Q,
    parents: impl IntoIterator<Item = P>,
    mut page: impl FnMut(&mut Q, usize, P),
) {
    for (branch, parent) in parents.into_iter().enumerate() {
        if branch > 0 {
            query.push_text(" UNION ALL ");
        }
        query.push_text("SELECT * FROM (");
        page(query, branch, parent);
        query.push_text(&format!(") AS page{branch}"));
    }
}
