//! One snapshot for a read of several statements, so that a commit landing between two of them
//! cannot make them disagree.

use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, Connection, Transaction};

/// A read transaction on `conn` whose statements all see one snapshot: SQLite's read
/// transactions always do; on PostgreSQL it is asked for (repeatable read, read only), as its
/// default sees each commit as it lands.
pub(crate) async fn begin(conn: &mut AnyConnection) -> sqlx::Result<Transaction<'_, Any>> {
    match Dialect::of(conn) {
        Dialect::Sqlite => conn.begin().await,
        Dialect::Postgres => {
            conn.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .await
        }
    }
}
