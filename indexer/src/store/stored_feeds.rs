//! Reputation feeds stored at epoch boundaries (`reputation_feeds`, `reputation_feed_pages`):
//! what the feed keeper ([`crate::feed::keeper`]) writes through the writer and `serve` reads
//! back, so a past block's feed is read rather than computed on request. A feed becomes
//! visible when its `reputation_feeds` row is written, after every page; pages without that row
//! are a computation cut short and are cleared before the next one.
//!
//! Left out of the canonical dump: a stored feed is a function of the dumped facts, and which
//! boundaries are stored depends on when the indexer was running, not on the chain.

use super::decode::{self, int};
use super::{QueryContext, Store, StoreError, StoreResult};
use crate::schema::{chain_cursor, reputation_feed_pages, reputation_feeds};
use sqlx::{AnyConnection, AnyPool};

/// A stored feed's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFeed {
    /// The block the feed is as of (an epoch boundary).
    pub block: u64,
    /// Its lines, one per agent.
    pub agents: u64,
    /// The body's length in bytes.
    pub bytes: u64,
    /// The body's SHA-256, lowercase hex.
    pub sha256: String,
}

/// One write of a stored feed, as the keeper sends it to the writer, in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedWrite {
    /// Clears the pages of feeds of the chain that were never finished.
    Begin {
        /// The chain.
        chain_id: u64,
    },
    /// One page of the body: whole lines, each ending in a newline.
    Page {
        /// The chain.
        chain_id: u64,
        /// The feed's block.
        block: u64,
        /// Its place in the body, from 0.
        page: u64,
        /// The lines.
        lines: String,
    },
    /// Makes the feed visible, then drops the chain's feeds beyond the newest `kept`; refused
    /// (and its pages dropped) unless all `pages` are there and the chain is still indexed up
    /// to its block (a rewind between its writes takes pages away).
    Finish {
        /// The header.
        feed: StoredFeed,
        /// The chain.
        chain_id: u64,
        /// Pages written.
        pages: u64,
        /// Feeds kept per chain.
        kept: u32,
    },
    /// Drops the chain's feeds beyond the newest `kept` (0: all) and any unfinished pages.
    Prune {
        /// The chain.
        chain_id: u64,
        /// Feeds kept per chain.
        kept: u32,
    },
}

#[derive(sqlx::FromRow)]
struct HeaderRow {
    block_number: i64,
    agents: i64,
    bytes: i64,
    sha256: String,
}

impl HeaderRow {
    fn decode(self) -> StoreResult<StoredFeed> {
        let table = reputation_feeds::NAME;
        Ok(StoredFeed {
            block: decode::uint(table, "block_number", self.block_number)?,
            agents: decode::uint(table, "agents", self.agents)?,
            bytes: decode::uint(table, "bytes", self.bytes)?,
            sha256: self.sha256,
        })
    }
}

impl Store {
    /// The feeds stored for `chain_id`, newest first.
    pub async fn stored_feeds(&self, chain_id: u64) -> StoreResult<Vec<StoredFeed>> {
        let rows: Vec<HeaderRow> = sqlx::query_as(&format!(
            "SELECT block_number, agents, bytes, sha256 FROM {reputation_feeds_table}
             WHERE chain_id = $1 ORDER BY block_number DESC",
            reputation_feeds_table = reputation_feeds::NAME,
        ))
        .bind(int("chain_id", chain_id)?)
        .fetch_all(self.reader())
        .await
        .context("listing the stored reputation feeds")?;
        rows.into_iter().map(HeaderRow::decode).collect()
    }

    /// The feed stored for `chain_id` at `block`, if there is one.
    pub async fn stored_feed(&self, chain_id: u64, block: u64) -> StoreResult<Option<StoredFeed>> {
        let row: Option<HeaderRow> = sqlx::query_as(&format!(
            "SELECT block_number, agents, bytes, sha256 FROM {reputation_feeds_table}
             WHERE chain_id = $1 AND block_number = $2",
            reputation_feeds_table = reputation_feeds::NAME,
        ))
        .bind(int("chain_id", chain_id)?)
        .bind(int("block", block)?)
        .fetch_optional(self.reader())
        .await
        .context("reading a stored reputation feed")?;
        row.map(HeaderRow::decode).transpose()
    }

    /// Page `page` of the feed stored for `chain_id` at `block` (`None` past the last).
    pub async fn stored_feed_page(
        &self,
        chain_id: u64,
        block: u64,
        page: u64,
    ) -> StoreResult<Option<String>> {
        sqlx::query_scalar(&format!(
            "SELECT lines FROM {reputation_feed_pages_table}
             WHERE chain_id = $1 AND block_number = $2 AND page = $3",
            reputation_feed_pages_table = reputation_feed_pages::NAME,
        ))
        .bind(int("chain_id", chain_id)?)
        .bind(int("block", block)?)
        .bind(int("page", page)?)
        .fetch_optional(self.reader())
        .await
        .context("reading a page of a stored reputation feed")
    }
}

/// Applies one write of a stored feed, in one transaction.
pub(super) async fn write(pool: &AnyPool, write: &FeedWrite) -> StoreResult<()> {
    let mut tx = pool
        .begin()
        .await
        .context("starting to store a reputation feed")?;
    match write {
        FeedWrite::Begin { chain_id } => clear_unfinished(&mut tx, *chain_id).await?,
        FeedWrite::Page {
            chain_id,
            block,
            page,
            lines,
        } => {
            sqlx::query(&format!(
                "INSERT INTO {reputation_feed_pages_table} (chain_id, block_number, page, lines)
                 VALUES ($1, $2, $3, $4)",
                reputation_feed_pages_table = reputation_feed_pages::NAME,
            ))
            .bind(int("chain_id", *chain_id)?)
            .bind(int("block", *block)?)
            .bind(int("page", *page)?)
            .bind(lines.as_str())
            .execute(&mut *tx)
            .await
            .context("storing a page of a reputation feed")?;
        }
        FeedWrite::Finish {
            feed,
            chain_id,
            pages,
            kept,
        } => {
            let chain = int("chain_id", *chain_id)?;
            if let Some(reason) = incomplete(&mut tx, *chain_id, feed.block, *pages).await? {
                clear_unfinished(&mut tx, *chain_id).await?;
                tx.commit()
                    .await
                    .context("clearing an incomplete reputation feed")?;
                return Err(StoreError::FeedIncomplete {
                    chain_id: *chain_id,
                    block: feed.block,
                    reason,
                });
            }
            sqlx::query(&format!(
                "INSERT INTO {reputation_feeds_table} (chain_id, block_number, agents, bytes, sha256)
                 VALUES ($1, $2, $3, $4, $5)",
                reputation_feeds_table = reputation_feeds::NAME,
            ))
            .bind(chain)
            .bind(int("block", feed.block)?)
            .bind(int("agents", feed.agents)?)
            .bind(int("bytes", feed.bytes)?)
            .bind(feed.sha256.as_str())
            .execute(&mut *tx)
            .await
            .context("storing a reputation feed")?;
            prune(&mut tx, *chain_id, *kept).await?;
        }
        FeedWrite::Prune { chain_id, kept } => prune(&mut tx, *chain_id, *kept).await?,
    }
    tx.commit()
        .await
        .context("committing a stored reputation feed")
}

/// Why the feed of `chain_id` at `block` written in `pages` pages may not be made visible.
async fn incomplete(
    conn: &mut AnyConnection,
    chain_id: u64,
    block: u64,
    pages: u64,
) -> StoreResult<Option<String>> {
    let chain = int("chain_id", chain_id)?;
    let found: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM {reputation_feed_pages_table} WHERE chain_id = $1 AND block_number = $2",
        reputation_feed_pages_table = reputation_feed_pages::NAME,
    ))
    .bind(chain)
    .bind(int("block", block)?)
    .fetch_one(&mut *conn)
    .await
    .context("counting a reputation feed's pages")?;
    if u64::try_from(found).ok() != Some(pages) {
        return Ok(Some(format!("{found} of its {pages} pages are stored")));
    }
    let indexed: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT indexed_block FROM {chain_cursor_table} WHERE chain_id = $1",
        chain_cursor_table = chain_cursor::NAME,
    ))
    .bind(chain)
    .fetch_optional(&mut *conn)
    .await
    .context("reading the indexed block")?;
    match indexed.and_then(|i| u64::try_from(i).ok()) {
        Some(indexed) if indexed >= block => Ok(None),
        indexed => Ok(Some(format!(
            "the chain is indexed up to {indexed:?} now, below the feed's block"
        ))),
    }
}

/// Drops the feeds of `chain_id` beyond the newest `kept`, and any unfinished pages.
async fn prune(conn: &mut AnyConnection, chain_id: u64, kept: u32) -> StoreResult<()> {
    sqlx::query(&format!(
        "DELETE FROM {reputation_feeds_table} WHERE chain_id = $1 AND block_number NOT IN (
             SELECT block_number FROM {reputation_feeds_table} WHERE chain_id = $1
             ORDER BY block_number DESC LIMIT $2)",
        reputation_feeds_table = reputation_feeds::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .bind(i64::from(kept))
    .execute(&mut *conn)
    .await
    .context("dropping the oldest stored reputation feeds")?;
    clear_unfinished(conn, chain_id).await
}

/// Drops every feed of `chain_id`: they were scored under rules no longer in force.
pub(super) async fn forget(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<()> {
    prune(conn, chain_id, 0).await
}

/// Deletes the pages of `chain_id` that belong to no visible feed.
async fn clear_unfinished(conn: &mut AnyConnection, chain_id: u64) -> StoreResult<()> {
    sqlx::query(&format!(
        "DELETE FROM {reputation_feed_pages_table} WHERE chain_id = $1 AND block_number NOT IN (
             SELECT block_number FROM {reputation_feeds_table} WHERE chain_id = $1)",
        reputation_feed_pages_table = reputation_feed_pages::NAME,
        reputation_feeds_table = reputation_feeds::NAME,
    ))
    .bind(int("chain_id", chain_id)?)
    .execute(&mut *conn)
    .await
    .context("clearing unfinished reputation feeds")?;
    Ok(())
}

/// Deletes the feeds of `chain_id` above `ancestor`, for a rewind (only a reorg deeper than
/// finality reaches a stored feed).
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    chain_id: u64,
    ancestor: u64,
) -> StoreResult<()> {
    let (chain, above) = (int("chain_id", chain_id)?, int("ancestor", ancestor)?);
    for table in [reputation_feeds::NAME, reputation_feed_pages::NAME] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE chain_id = $1 AND block_number > $2"
        ))
        .bind(chain)
        .bind(above)
        .execute(&mut *conn)
        .await
        .context("deleting stored reputation feeds above a reorg")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(block: u64, body: &str) -> StoredFeed {
        StoredFeed {
            block,
            agents: body.lines().count() as u64,
            bytes: body.len() as u64,
            sha256: format!("{block:064x}"),
        }
    }

    async fn store_feed(writer: &crate::store::Writer, block: u64, pages: &[&str], kept: u32) {
        writer
            .store_feed(FeedWrite::Begin { chain_id: 1 })
            .await
            .unwrap();
        for (page, lines) in pages.iter().enumerate() {
            writer
                .store_feed(FeedWrite::Page {
                    chain_id: 1,
                    block,
                    page: page as u64,
                    lines: lines.to_string(),
                })
                .await
                .unwrap();
        }
        writer
            .store_feed(FeedWrite::Finish {
                feed: header(block, &pages.concat()),
                chain_id: 1,
                pages: pages.len() as u64,
                kept,
            })
            .await
            .unwrap();
    }

    /// The blocks of chain 1's stored feeds, newest first.
    async fn stored_blocks(store: &Store) -> Vec<u64> {
        let feeds = store.stored_feeds(1).await.unwrap();
        feeds.iter().map(|f| f.block).collect()
    }

    async fn page_rows(store: &Store) -> Vec<(i64, i64)> {
        sqlx::query_as(&format!(
            "SELECT block_number, page FROM {reputation_feed_pages_table} ORDER BY 1, 2",
            reputation_feed_pages_table = reputation_feed_pages::NAME,
        ))
        .fetch_all(store.reader())
        .await
        .unwrap()
    }

    /// Feeds appear whole, the newest `kept` stay, an unfinished one is cleared by the next, an
    /// incomplete one is refused, a rewind takes those above its ancestor, and a prune to none
    /// takes them all.
    #[tokio::test]
    async fn feeds_are_kept_newest_first_and_cleared_when_unfinished_or_rewound() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = Store::open(&url).await.unwrap();
        // The chain is indexed up to block 100 (the read pool is read-only: a connection of
        // the test's own writes the cursor).
        let mut conn = <AnyConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        sqlx::query(&format!(
            "INSERT INTO {chain_cursor_table} (chain_id, name, indexed_block, finalized_block, head_block,
               settled_block) VALUES (1, 't', 100, 100, 100, 100)",
            chain_cursor_table = chain_cursor::NAME,
        ))
        .execute(&mut conn)
        .await
        .unwrap();
        drop(conn);
        let writer = store.writer(4);
        for block in [2, 4, 6, 8] {
            store_feed(&writer, block, &["{\"a\":1}\n", "{\"b\":2}\n"], 3).await;
        }
        let blocks = stored_blocks(&store).await;
        assert_eq!(blocks, [8, 6, 4], "the newest three, newest first");
        assert_eq!(
            store.stored_feed(1, 6).await.unwrap(),
            Some(header(6, "{\"a\":1}\n{\"b\":2}\n"))
        );
        assert_eq!(store.stored_feed(1, 2).await.unwrap(), None);
        assert_eq!(
            store.stored_feed_page(1, 6, 1).await.unwrap().as_deref(),
            Some("{\"b\":2}\n")
        );
        assert_eq!(store.stored_feed_page(1, 6, 2).await.unwrap(), None);
        assert!(
            page_rows(&store).await.iter().all(|(block, _)| *block != 2),
            "a dropped feed's pages go with it"
        );

        // Pages written without a header (a keeper stopped half way) are invisible, and the
        // next feed's start clears them.
        writer
            .store_feed(FeedWrite::Page {
                chain_id: 1,
                block: 10,
                page: 0,
                lines: "{\"c\":3}\n".into(),
            })
            .await
            .unwrap();
        assert_eq!(store.stored_feed(1, 10).await.unwrap(), None);
        writer
            .store_feed(FeedWrite::Begin { chain_id: 1 })
            .await
            .unwrap();
        assert!(
            page_rows(&store)
                .await
                .iter()
                .all(|(block, _)| *block != 10),
            "the unfinished pages are gone"
        );

        // A feed whose pages did not all arrive (a rewind came between its writes), or whose
        // block the chain is no longer indexed up to, is refused and its pages dropped.
        for (block, written, said) in [(12, 1, "1 of its 2 pages"), (200, 2, "indexed up to")] {
            writer
                .store_feed(FeedWrite::Begin { chain_id: 1 })
                .await
                .unwrap();
            for page in 0..written {
                let lines = "{\"a\":1}\n".to_string();
                let write = FeedWrite::Page {
                    chain_id: 1,
                    block,
                    page,
                    lines,
                };
                writer.store_feed(write).await.unwrap();
            }
            let refused = writer
                .store_feed(FeedWrite::Finish {
                    feed: header(block, "{\"a\":1}\n{\"a\":1}\n"),
                    chain_id: 1,
                    pages: 2,
                    kept: 3,
                })
                .await
                .unwrap_err();
            assert!(refused.to_string().contains(said), "{refused}");
            assert_eq!(store.stored_feed(1, block).await.unwrap(), None);
            assert!(
                page_rows(&store)
                    .await
                    .iter()
                    .all(|(b, _)| *b != block as i64)
            );
        }

        // The reader pool is read-only: the rewind gets a connection of its own.
        let mut conn = <AnyConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        rewind(&mut conn, 1, 5).await.unwrap();
        drop(conn);
        let blocks = stored_blocks(&store).await;
        assert_eq!(blocks, [4], "feeds above the ancestor are gone");
        assert!(page_rows(&store).await.iter().all(|(block, _)| *block == 4));

        // `feeds_kept = 0` at the next start: every feed goes.
        let prune = FeedWrite::Prune {
            chain_id: 1,
            kept: 0,
        };
        writer.store_feed(prune).await.unwrap();
        assert_eq!(store.stored_feeds(1).await.unwrap(), []);
        assert_eq!(page_rows(&store).await, []);
        drop(writer);
        store.close().await;
    }
}
