//! One snapshot for a read of several statements, so that a commit landing between two of them
//! cannot make them disagree.

use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, Connection, Transaction};

/// A read transaction on `conn` whose statements all see one snapshot
/// ([`Dialect::begin_snapshot`]).
pub(crate) async fn begin(conn: &mut AnyConnection) -> sqlx::Result<Transaction<'_, Any>> {
    let begin = Dialect::of(conn).begin_snapshot();
    conn.begin_with(begin).await
}
