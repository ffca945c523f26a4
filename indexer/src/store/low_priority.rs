//! Reads at low priority: work nobody waits on (a reputation feed, the requests of an API
//! client over its share of the server's time) runs inside [`scope`], and while it does
//! [`super::Store::reader`] hands it the store's low-priority read pool, whose SQLite worker
//! threads run at the lowest priority ([`crate::priority`]). A store without one (PostgreSQL,
//! whose work runs in its server's processes; a store opened without
//! [`super::OpenOptions::low_priority_readers`]) hands out its ordinary read pool.
//!
//! A task-local, so it holds for `future` across awaits but not for tasks `future` spawns:
//! those that read the store are wrapped in [`scope`] again.

use std::future::Future;

tokio::task_local! {
    static LOW_PRIORITY: ();
}

/// Runs `future` with the store's reads at low priority.
pub async fn scope<F: Future>(future: F) -> F::Output {
    LOW_PRIORITY.scope((), future).await
}

/// Whether the calling task runs inside [`scope`].
pub fn in_scope() -> bool {
    LOW_PRIORITY.try_with(|_| ()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_scope_holds_across_awaits_and_ends_with_its_future() {
        assert!(!in_scope());
        let inside = scope(async {
            tokio::task::yield_now().await;
            in_scope()
        })
        .await;
        assert!(inside);
        assert!(!in_scope());
        // A spawned task starts outside, whoever spawned it.
        let spawned = scope(async { tokio::spawn(async { in_scope() }).await.unwrap() }).await;
        assert!(!spawned);
    }

    #[tokio::test]
    async fn a_store_reads_through_its_low_priority_pool_inside_the_scope_only() {
        use crate::store::{OpenOptions, Store, StoreRead};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("low.db").display());
        let options = OpenOptions {
            low_priority_readers: 1,
            ..OpenOptions::default()
        };
        let store = Store::open_with(&url, options).await.unwrap();
        let pool_size = |store: &Store| store.reader().options().get_max_connections();
        assert_eq!(pool_size(&store), 8, "the ordinary readers");
        let (inside, statuses) =
            scope(async { (pool_size(&store), store.statuses().await.unwrap()) }).await;
        assert_eq!(inside, 1, "the low-priority readers");
        assert!(statuses.is_empty(), "a new store has no chains");
        store.close().await;

        // A store without such a pool reads the ordinary one everywhere.
        let plain = Store::open(&url).await.unwrap();
        assert_eq!(scope(async { pool_size(&plain) }).await, 8);
        plain.close().await;
    }
}
