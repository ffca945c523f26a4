//! What committed batches changed in a run of blocks: agents registered or updated, reputation
//! rows rescored, payments credited. Subscriptions are fed from these reads, so they only ever
//! report committed data.

use agentindex_indexer::schema::{agent_profiles, agents};
use sqlx::AnyPool;

/// One change, at the block it happened in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    /// An agent was registered (`registered`) or its chain state changed.
    Agent {
        chain_id: i64,
        block: i64,
        key: String,
        registered: bool,
    },
    /// What an agent's documents say changed (its card, registration file or their
    /// verification), on-chain state unchanged. Not tied to a block: reported live only.
    Documents { chain_id: i64, key: String },
    /// An agent's stored reputation was recomputed.
    Reputation {
        chain_id: i64,
        block: i64,
        key: String,
    },
    /// A payment was credited to an agent.
    Payment {
        chain_id: i64,
        block: i64,
        payment: PaymentRow,
    },
}

impl Change {
    /// The chain and block of a change that happened on-chain; `None` for document updates.
    pub(crate) fn chain_and_block(&self) -> Option<(i64, i64)> {
        match self {
            Change::Agent {
                chain_id, block, ..
            }
            | Change::Reputation {
                chain_id, block, ..
            }
            | Change::Payment {
                chain_id, block, ..
            } => Some((*chain_id, *block)),
            Change::Documents { .. } => None,
        }
    }
}

/// An agent whose documents changed: its update number, key, chain and newest on-chain block.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct DocumentUpdate {
    pub(crate) seq: i64,
    pub(crate) agent_key: String,
    pub(crate) chain_id: i64,
    pub(crate) last_event_block: i64,
}

/// The newest document update number.
pub(crate) async fn latest_document_update(pool: &AnyPool) -> sqlx::Result<i64> {
    sqlx::query_scalar(&format!(
        "SELECT coalesce(max({}), 0) FROM {}",
        agent_profiles::document_seq,
        agent_profiles::NAME
    ))
    .fetch_one(pool)
    .await
}

/// Agents whose documents changed after update number `after`, oldest first.
pub(crate) async fn document_updates(
    pool: &AnyPool,
    after: i64,
) -> sqlx::Result<Vec<DocumentUpdate>> {
    sqlx::query_as(&format!(
        "SELECT p.document_seq AS seq, p.agent_key, a.chain_id, a.last_event_block
           FROM {} p JOIN {} a ON a.agent_key = p.agent_key
          WHERE p.document_seq > $1 ORDER BY p.document_seq",
        agent_profiles::NAME,
        agents::NAME
    ))
    .bind(after)
    .fetch_all(pool)
    .await
}

/// A credited payment as the API shows it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct PaymentRow {
    pub(crate) agent_key: String,
    pub(crate) block_number: i64,
    pub(crate) log_index: i64,
    pub(crate) tx_hash: String,
    pub(crate) token: String,
    pub(crate) payer: String,
    pub(crate) payee: String,
    pub(crate) amount: String,
    #[sqlx(try_from = "agentindex_indexer::store::Flag")]
    pub(crate) x402: bool,
    pub(crate) timestamp: i64,
}

/// The changes of `chain_id` in blocks `(after, up_to]`, in chain order within each kind, read
/// whole (the tests' reference for [`Pages`]).
#[cfg(test)]
pub(crate) async fn between(
    pool: &AnyPool,
    chain_id: i64,
    after: i64,
    up_to: i64,
) -> sqlx::Result<Vec<Change>> {
    let mut changes = Vec::new();
    let mut pages = Pages::new(chain_id, after, up_to);
    while let Some(page) = pages.next(pool, BETWEEN_PAGE_ROWS).await? {
        changes.extend(page);
    }
    Ok(changes)
}

/// Rows [`between`] reads at a time (it keeps them all; the feed and replays use [`Pages`]).
#[cfg(test)]
const BETWEEN_PAGE_ROWS: i64 = 2_000;

/// The kinds of change, in the order a run of blocks is read: agents, then reputation, then
/// payments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Agents,
    Reputation,
    Payments,
}

/// The last row a page ended on, for the next page to start after (keyset paging: each page is
/// one index range scan, however far into the run it is).
#[derive(Debug, Clone, PartialEq)]
struct LastRow {
    block: i64,
    log_index: i64,
    agent_key: String,
}

/// The changes of one chain in blocks `(after, up_to]`, read a page at a time, in the same order
/// as [`between`], so that what a replay holds at once is one page whatever the range.
#[derive(Debug, Clone)]
pub(crate) struct Pages {
    chain_id: i64,
    after: i64,
    up_to: i64,
    kind: Option<Kind>,
    /// Kinds not read at all (a subscription to payments never reads agents).
    skipped: Vec<Kind>,
    last: Option<LastRow>,
}

impl Pages {
    pub(crate) fn new(chain_id: i64, after: i64, up_to: i64) -> Self {
        Self {
            chain_id,
            after,
            up_to,
            kind: Some(Kind::Agents),
            skipped: Vec::new(),
            last: None,
        }
    }

    /// The same run of blocks, reading changes of `kind` only.
    pub(crate) fn only(mut self, kind: Kind) -> Self {
        self.skipped = [Kind::Agents, Kind::Reputation, Kind::Payments]
            .into_iter()
            .filter(|k| *k != kind)
            .collect();
        self
    }

    /// The kind read after `kind`.
    fn after(kind: Kind) -> Option<Kind> {
        match kind {
            Kind::Agents => Some(Kind::Reputation),
            Kind::Reputation => Some(Kind::Payments),
            Kind::Payments => None,
        }
    }

    /// The next at most `rows` changes, or `None` once all were read.
    pub(crate) async fn next(
        &mut self,
        pool: &AnyPool,
        rows: i64,
    ) -> sqlx::Result<Option<Vec<Change>>> {
        while let Some(kind) = self.kind {
            if self.skipped.contains(&kind) {
                self.kind = Self::after(kind);
                continue;
            }
            let page = match kind {
                Kind::Agents => self.agents(pool, rows).await?,
                Kind::Reputation => self.reputation(pool, rows).await?,
                Kind::Payments => self.payments(pool, rows).await?,
            };
            if (page.len() as i64) < rows {
                self.kind = Self::after(kind);
                self.last = None;
            }
            if !page.is_empty() {
                return Ok(Some(page));
            }
        }
        Ok(None)
    }

    /// The SQL of a page of `kind`: `$1` chain, `$2` the block it starts after (the run's
    /// start, or when `keyed`, a page after another, the last row's block), `$3` up to and, when
    /// `keyed`, `$4` the last row's key and, for payments, `$5` its log index. Each is one range
    /// scan of an index in the order it pages in (migrations/sqlite/0016_replay_order.sql),
    /// never a sort of what is left.
    fn sql(kind: Kind, keyed: bool, rows: i64) -> String {
        let (table, block) = kind.stored_in();
        let (columns, order) = match kind {
            Kind::Agents => (
                "agent_key, registered_block, last_event_block",
                "last_event_block, agent_key",
            ),
            Kind::Reputation => ("agent_key, as_of_block", "as_of_block, agent_key"),
            Kind::Payments => (
                "agent_key, block_number, log_index, tx_hash, token, payer, payee, amount,
                 scheme IS NOT NULL AS x402, timestamp",
                "block_number, log_index, agent_key",
            ),
        };
        // Row values in the index's order: one range to seek to, even inside a block of a
        // million rows (an epoch's rescore brings every agent to one block). No other bound on
        // the block beside it, or SQLite seeks with that one and walks the block.
        let lower = match (keyed, kind) {
            (false, _) => format!("{block} > $2"),
            (true, Kind::Payments) => format!("({block}, log_index, agent_key) > ($2, $5, $4)"),
            (true, _) => format!("({block}, agent_key) > ($2, $4)"),
        };
        format!(
            "SELECT {columns} FROM {table}
             WHERE chain_id = $1 AND {lower} AND {block} <= $3
             ORDER BY {order} LIMIT {rows}"
        )
    }

    async fn agents(&mut self, pool: &AnyPool, rows: i64) -> sqlx::Result<Vec<Change>> {
        let sql = Self::sql(Kind::Agents, self.last.is_some(), rows);
        let found: Vec<(String, i64, i64)> =
            self.bind(sqlx::query_as(&sql)).fetch_all(pool).await?;
        if let Some((key, _, block)) = found.last() {
            self.last = Some(LastRow {
                block: *block,
                log_index: 0,
                agent_key: key.clone(),
            });
        }
        let (chain_id, after) = (self.chain_id, self.after);
        Ok(found
            .into_iter()
            .map(|(key, registered, block)| Change::Agent {
                chain_id,
                block,
                key,
                registered: registered > after,
            })
            .collect())
    }

    async fn reputation(&mut self, pool: &AnyPool, rows: i64) -> sqlx::Result<Vec<Change>> {
        let sql = Self::sql(Kind::Reputation, self.last.is_some(), rows);
        let found: Vec<(String, i64)> = self.bind(sqlx::query_as(&sql)).fetch_all(pool).await?;
        if let Some((key, block)) = found.last() {
            self.last = Some(LastRow {
                block: *block,
                log_index: 0,
                agent_key: key.clone(),
            });
        }
        let chain_id = self.chain_id;
        Ok(found
            .into_iter()
            .map(|(key, block)| Change::Reputation {
                chain_id,
                block,
                key,
            })
            .collect())
    }

    async fn payments(&mut self, pool: &AnyPool, rows: i64) -> sqlx::Result<Vec<Change>> {
        let sql = Self::sql(Kind::Payments, self.last.is_some(), rows);
        let mut query = self.bind(sqlx::query_as::<_, PaymentRow>(&sql));
        if let Some(last) = &self.last {
            query = query.bind(last.log_index);
        }
        let found: Vec<PaymentRow> = query.fetch_all(pool).await?;
        if let Some(payment) = found.last() {
            self.last = Some(LastRow {
                block: payment.block_number,
                log_index: payment.log_index,
                agent_key: payment.agent_key.clone(),
            });
        }
        let chain_id = self.chain_id;
        Ok(found
            .into_iter()
            .map(|payment| Change::Payment {
                chain_id,
                block: payment.block_number,
                payment,
            })
            .collect())
    }

    /// Binds `$1` chain, `$2` the block the page starts after (the last row's, else the run's
    /// start), `$3` up to, and `$4` the last row's key.
    fn bind<'q, O>(
        &self,
        query: sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::QueryAs<'q, sqlx::Any, O, sqlx::any::AnyArguments<'q>> {
        let start = self.last.as_ref().map_or(self.after, |last| last.block);
        let query = query.bind(self.chain_id).bind(start).bind(self.up_to);
        match &self.last {
            None => query,
            Some(last) => query.bind(last.agent_key.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Paging over a real store: agents, rescored agents and payments several to a block (ties
    //! broken by key and log index), read in small pages, come out exactly as one read of the
    //! whole run does, no page larger than asked.

    use super::*;
    use agentindex_indexer::schema::agent_reputation;
    use agentindex_indexer::store::Store;
    use sqlx::{Any, QueryBuilder};

    const ROWS: usize = 450;

    async fn store_with_changes() -> (tempfile::TempDir, AnyPool) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("changes.db").display());
        Store::open(&url).await.unwrap().close().await;
        let pool = AnyPool::connect(&url).await.unwrap();
        let numbers: Vec<usize> = (0..ROWS).collect();
        for chunk in numbers.chunks(150) {
            let mut agents = QueryBuilder::<Any>::new(format!(
                "INSERT INTO {} (agent_key, chain_id, source, owner, operators, active,
                   registered_block, registered_at, last_event_block) ",
                agents::NAME
            ));
            agents.push_values(chunk, |mut row, i| {
                // Seven agents a block.
                let block = (*i / 7) as i64 + 1;
                row.push_bind(format!("1:{i:05}"))
                    .push_bind(1)
                    .push_bind("factory")
                    .push_bind("0x0")
                    .push_bind("[]")
                    .push_bind(true)
                    .push_bind(block / 2)
                    .push_bind(block * 12)
                    .push_bind(block);
            });
            agents.build().execute(&pool).await.unwrap();
            let mut scores = QueryBuilder::<Any>::new(format!(
                "INSERT INTO {} (agent_key, chain_id, as_of_block, as_of_timestamp,
                   score, payment_score, payment_count, unique_payers, excluded_payments,
                   feedback_count, evaluation) ",
                agent_reputation::NAME
            ));
            scores.push_values(chunk, |mut row, i| {
                row.push_bind(format!("1:{i:05}"))
                    .push_bind(1)
                    .push_bind((*i / 5) as i64 + 1)
                    .push_bind(12)
                    .push_bind(1.0)
                    .push_bind(1.0)
                    .push_bind(1)
                    .push_bind(1)
                    .push_bind(0)
                    .push_bind(0)
                    .push_bind("{}");
            });
            scores.build().execute(&pool).await.unwrap();
            // Three logs a block, each paying two agents: ties on (block, log index).
            let paid: Vec<_> = chunk
                .iter()
                .map(|i| {
                    let (block, log) = ((*i / 6) as i64 + 1, ((*i / 2) % 3) as i64);
                    (1, block, log, format!("1:{:05}", 1_000 - i % 2))
                })
                .collect();
            super::super::change_spans::insert_test_payments(&pool, &paid).await;
        }
        (dir, pool)
    }

    #[tokio::test]
    async fn a_run_read_in_small_pages_is_the_run_read_whole() {
        let (_dir, pool) = store_with_changes().await;
        // Blocks (5, 60]: a middle part, so both bounds cut through ties.
        let whole = between(&pool, 1, 5, 60).await.unwrap();
        // Agents 35..=419, scores 25..=299, payments 30..=359 fall in those blocks.
        assert_eq!(whole.len(), 385 + 275 + 330);
        let mut pages = Pages::new(1, 5, 60);
        let mut paged = Vec::new();
        let mut sizes = Vec::new();
        while let Some(page) = pages.next(&pool, 40).await.unwrap() {
            sizes.push(page.len());
            paged.extend(page);
        }
        assert!(sizes.iter().all(|size| *size <= 40), "{sizes:?}");
        assert!(sizes.len() >= whole.len() / 40, "{sizes:?}");
        assert_eq!(paged, whole);
        assert!(
            whole
                .iter()
                .all(|c| c.chain_and_block().is_some_and(|(_, b)| b > 5 && b <= 60))
        );
    }

    #[tokio::test]
    async fn a_run_read_for_one_kind_is_that_kind_of_the_whole_run() {
        let (_dir, pool) = store_with_changes().await;
        let whole = between(&pool, 1, 5, 60).await.unwrap();
        for (kind, count) in [
            (Kind::Agents, 385),
            (Kind::Reputation, 275),
            (Kind::Payments, 330),
        ] {
            let of_kind = |c: &Change| match c {
                Change::Agent { .. } => kind == Kind::Agents,
                Change::Reputation { .. } => kind == Kind::Reputation,
                Change::Payment { .. } => kind == Kind::Payments,
                Change::Documents { .. } => false,
            };
            let mut pages = Pages::new(1, 5, 60).only(kind);
            let mut paged = Vec::new();
            while let Some(page) = pages.next(&pool, 40).await.unwrap() {
                paged.extend(page);
            }
            let expected: Vec<Change> = whole.iter().filter(|c| of_kind(c)).cloned().collect();
            assert_eq!(expected.len(), count, "{kind:?}");
            assert_eq!(paged, expected, "{kind:?}");
        }
    }

    /// A replay from far back reads hundreds of pages: each must be one range scan of an index
    /// in its order starting at the last page's end, so a page costs the same at the end of a
    /// replay, or deep inside one block's rows, as at its start.
    #[tokio::test]
    async fn every_page_is_a_range_scan_of_an_index_in_its_order() {
        let (_dir, pool) = store_with_changes().await;
        for kind in [Kind::Agents, Kind::Reputation, Kind::Payments] {
            for keyed in [false, true] {
                let sql = format!("EXPLAIN QUERY PLAN {}", Pages::sql(kind, keyed, 40));
                let mut query = sqlx::query_as::<_, crate::read::PlanStep>(&sql)
                    .bind(1_i64)
                    .bind(5_i64)
                    .bind(60_i64);
                if keyed {
                    query = query.bind("1:00100");
                    if kind == Kind::Payments {
                        query = query.bind(1_i64);
                    }
                }
                let plan = query.fetch_all(&pool).await.unwrap();
                let details: Vec<&str> = plan.iter().map(|step| step.detail.as_str()).collect();
                assert!(
                    details.iter().all(|d| d.starts_with("SEARCH ")),
                    "{kind:?} (keyed: {keyed}) must search an index: {details:?}"
                );
                assert!(
                    !details.iter().any(|d| d.contains("TEMP B-TREE")),
                    "{kind:?} (keyed: {keyed}) must not sort: {details:?}"
                );
                // After a page, the seek starts at its last row, not at its block's first.
                assert!(
                    !keyed || details.iter().any(|d| d.contains(",agent_key)>(?,?")),
                    "{kind:?} after a page must seek to its last row: {details:?}"
                );
            }
        }
    }
}
