//! PostgreSQL's planner statistics kept up with a backfill ([`Statistics`]).
//!
//! A backfill grows the fact tables from nothing to hundreds of thousands of rows in seconds,
//! far faster than autovacuum's `ANALYZE` follows (it wakes once a minute). Planned on the
//! statistics of a nearly empty table, the reads that refresh agents and rescore them (a few
//! hundred token ids at a time) scan a whole registry's rows instead of looking each id up: the
//! final rescore of a 200,000-event backfill took four times as long as on SQLite. So the
//! writer analyzes a table itself, inside the batch that wrote to it, each time the rows it
//! has written since the table was last analyzed reach the rows it had then (the statistics are
//! never more than half a table behind, at a cost of a logarithmic number of `ANALYZE`s).
//! SQLite plans these reads from the indexes alone and needs none of this.

use super::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Rows a table gains before it is first analyzed: below this any plan is quick.
const FIRST_ANALYZE_ROWS: u64 = 1_000;

/// The statistics target of these analyses (PostgreSQL samples 300 rows per unit of it; its
/// default is 100).
const SAMPLE_TARGET: u32 = 10;

/// Tables whose statistics could not change a plan: the raw `events` are only ever read by
/// block range on their primary key, and analyzing their wide rows is the dearest of all.
const NEVER_ANALYZED: [&str; 1] = ["events"];

/// Rows written per table since its last `ANALYZE`, and as of it.
#[derive(Debug, Default)]
pub(super) struct Statistics {
    tables: Mutex<BTreeMap<&'static str, Growth>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Growth {
    /// Rows this writer had written to the table when it last analyzed it.
    analyzed_at: u64,
    /// Rows written since.
    since: u64,
}

impl Statistics {
    /// Counts the rows a batch wrote (`written`, by table) and analyzes the tables that have
    /// doubled since they were last analyzed, on `conn` inside the batch's transaction.
    pub(super) async fn after_writing(
        &self,
        conn: &mut AnyConnection,
        written: &BTreeMap<&'static str, u64>,
    ) -> StoreResult<()> {
        let due = self.due(written);
        if due.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        // A small sample tells a lookup from a scan; autovacuum's own ANALYZE, at the default
        // sample, follows once the backfill slows down.
        for statement in [
            format!("SET LOCAL default_statistics_target = {SAMPLE_TARGET}"),
            format!("ANALYZE {}", due.join(", ")),
            "SET LOCAL default_statistics_target TO DEFAULT".to_string(),
        ] {
            sqlx::query(&statement)
                .execute(&mut *conn)
                .await
                .context("analyzing tables a backfill has grown")?;
        }
        tracing::debug!(target: "agentindex::store", tables = ?due, elapsed = ?started.elapsed(), "analyzed");
        Ok(())
    }

    /// The tables to analyze now, counted as analyzed.
    fn due(&self, written: &BTreeMap<&'static str, u64>) -> Vec<&'static str> {
        let mut tables = self
            .tables
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut due = Vec::new();
        for (&table, &rows) in written {
            if rows == 0 || NEVER_ANALYZED.contains(&table) {
                continue;
            }
            let growth = tables.entry(table).or_default();
            growth.since += rows;
            if growth.since >= FIRST_ANALYZE_ROWS.max(growth.analyzed_at) {
                growth.analyzed_at += growth.since;
                growth.since = 0;
                due.push(table);
            }
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(rows: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
        rows.iter().copied().collect()
    }

    #[test]
    fn a_table_is_analyzed_each_time_it_doubles() {
        let statistics = Statistics::default();
        let mut analyzed_after = Vec::new();
        let mut total = 0;
        for _ in 0..40 {
            total += 500;
            if !statistics.due(&batch(&[("feedback", 500)])).is_empty() {
                analyzed_after.push(total);
            }
        }
        assert_eq!(analyzed_after, [1_000, 2_000, 4_000, 8_000, 16_000]);
    }

    #[test]
    fn small_tables_and_the_raw_events_are_left_to_autovacuum() {
        let statistics = Statistics::default();
        assert!(
            statistics
                .due(&batch(&[("events", 50_000), ("watched_agents", 999)]))
                .is_empty()
        );
        assert_eq!(
            statistics.due(&batch(&[("watched_agents", 1)])),
            ["watched_agents"]
        );
    }
}
