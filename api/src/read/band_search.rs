//! The best page of a plain search of two words, read weight band by weight band: how
//! PostgreSQL ranks one without looking agents up one by one.
//!
//! A word's postings take few distinct weights (a word in an agent's name, skills or tags and
//! description, counted with saturation), so every agent with both words falls in one pair of
//! bands, one of each word, and its relevance is that pair's sum. Pairs are taken by descending
//! sum; the agents of one pair are the intersection of two runs of `agent_postings_impact`
//! (`term, weight, doc`), each already in number order, which PostgreSQL merges as two
//! index-only range scans, stopping at the page's last row. Where `ranked_search` looks each
//! agent met up in the other word's list (an index descent each, about 150 a round), a pair reads
//! neighbouring index entries: at a million agents a page of "search tag7" reads 47 buffers this
//! way against about 2,400. A band much shorter than its partner has its agents looked up
//! instead, and a search that would read more than [`Reads::budget`] entries is given back to the
//! caller, which ranks every match.

use agentindex_indexer::schema::agent_postings;
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Where the previous page of a ranked search ended: its last row's relevance and number (both
/// rankings, this and `ranked_search`'s, page from one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct After {
    pub(crate) score: i64,
    pub(crate) doc: i64,
}

impl After {
    /// Whether a match with `score` and number `doc` comes after this position.
    pub(crate) fn precedes(&self, score: i64, doc: i64) -> bool {
        score < self.score || (score == self.score && doc > self.doc)
    }
}

/// Distinct weights a word may have; a word with more is ranked by `ranked_search`'s lists.
const MAX_BANDS: i64 = 32;

/// How much a ranking may read, in index entries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads {
    /// Entries of each band a pair's first merge step reads at most; each further step of the
    /// pair reads twice as many, up to [`MAX_STEP_GROWTH`] times this.
    pub(crate) step: i64,
    /// Entries a whole search may read before it is given back: a statement counts
    /// [`STATEMENT_COST`], an agent looked up by number [`LOOKUP_COST`], a merge that found all
    /// it was asked for its whole step of both bands, one that did not each band's entries
    /// twice (merged, then counted).
    pub(crate) budget: i64,
}

/// How many times its first a pair's merge step grows to.
const MAX_STEP_GROWTH: i64 = 16;
/// What a statement costs against the budget, in entries, whatever it reads.
const STATEMENT_COST: i64 = 256;
/// What looking one agent up by number costs, in entries: a descent of the index (a few pages,
/// a search within each) against the next entry of a page already read, for a merge.
const LOOKUP_COST: i64 = 32;

impl Default for Reads {
    fn default() -> Self {
        Reads {
            step: 1_024,
            budget: 262_144,
        }
    }
}

/// Entries read so far, against the budget.
struct Spent {
    entries: i64,
    budget: i64,
}

impl Spent {
    /// Counts `entries` more; `false` once past the budget.
    fn charge(&mut self, entries: i64) -> bool {
        self.entries += entries;
        self.entries <= self.budget
    }
}

/// A band pair: a weight of each word.
type Pair = (i64, i64);

/// Up to `limit` agents having both `words` after `after`, best first, with their relevance
/// (ties to the lower number); `None` when a word has more than [`MAX_BANDS`] weights or the
/// ranking would read past the budget.
pub(crate) async fn best_of_pair(
    conn: &mut AnyConnection,
    words: [&str; 2],
    after: Option<After>,
    limit: i64,
    reads: Reads,
) -> sqlx::Result<Option<Vec<(i64, i64)>>> {
    let mut spent = Spent {
        entries: 2 * STATEMENT_COST,
        budget: reads.budget,
    };
    let (Some(first), Some(second)) = (bands(conn, words[0]).await?, bands(conn, words[1]).await?)
    else {
        return Ok(None);
    };
    let mut page: Vec<(i64, i64)> = Vec::new();
    for (score, pairs) in levels(&first, &second) {
        if after.is_some_and(|a| score > a.score) {
            continue;
        }
        let from = match after {
            Some(a) if a.score == score => a.doc,
            _ => i64::MIN,
        };
        let want = limit - page.len() as i64;
        let mut found = Vec::new();
        for pair in pairs {
            let mut merge = Merge {
                words,
                pair,
                step: reads.step,
            };
            match merge
                .matches(conn, from, want, &mut spent, reads.step)
                .await?
            {
                Some(docs) => found.extend(docs),
                None => return Ok(None),
            }
        }
        // The pairs of one sum hold different agents; each gave its first `want`.
        found.sort_unstable();
        found.truncate(want as usize);
        page.extend(found.into_iter().map(|doc| (doc, score)));
        if page.len() as i64 >= limit {
            break;
        }
    }
    Ok(Some(page))
}

/// The pairs of `first`'s and `second`'s weights grouped by their sum, highest first.
fn levels(first: &[i64], second: &[i64]) -> Vec<(i64, Vec<Pair>)> {
    let mut by_sum: BTreeMap<Reverse<i64>, Vec<Pair>> = BTreeMap::new();
    for a in first {
        for b in second {
            by_sum.entry(Reverse(a + b)).or_default().push((*a, *b));
        }
    }
    by_sum.into_iter().map(|(Reverse(s), p)| (s, p)).collect()
}

/// `word`'s distinct weights, heaviest first, each found by one descent of
/// `agent_postings_impact` (a loose index scan); `None` past [`MAX_BANDS`].
async fn bands(conn: &mut AnyConnection, word: &str) -> sqlx::Result<Option<Vec<i64>>> {
    let table = agent_postings::NAME;
    let mut query = QueryBuilder::<Any>::new(format!(
        "WITH RECURSIVE w (n, weight) AS (SELECT 1, max(weight) FROM {table} WHERE term = "
    ));
    query.push_bind(word.to_string());
    query.push(format!(
        " UNION ALL SELECT n + 1, (SELECT max(p.weight) FROM {table} p WHERE p.term = "
    ));
    query.push_bind(word.to_string());
    query.push(" AND p.weight < w.weight) FROM w WHERE w.weight IS NOT NULL AND n <= ");
    query.push_bind(MAX_BANDS);
    query.push(") SELECT weight FROM w WHERE weight IS NOT NULL ORDER BY weight DESC");
    let weights: Vec<i64> = Dialect::of(conn)
        .portable(query)
        .build_query_scalar()
        .fetch_all(&mut *conn)
        .await?;
    Ok((weights.len() as i64 <= MAX_BANDS).then_some(weights))
}

/// The agents of one band pair: both words, each at its weight.
struct Merge<'a> {
    words: [&'a str; 2],
    pair: Pair,
    /// Entries of each band the next step reads at most.
    step: i64,
}

impl Merge<'_> {
    /// The first `want` agents numbered above `from` in both bands, in number order (all of
    /// them when fewer); `None` past the budget. Each step merges the next `step` entries of
    /// each band (twice as many as the step before); where that ran out of a band's entries
    /// before `want` matches, the numbers up to the nearer end of a band's step are settled and
    /// the next step goes on from there. When one band ends within a step and the other goes
    /// on, the short band's rest is looked up in the other word's list instead, if that costs
    /// less than the next step.
    async fn matches(
        &mut self,
        conn: &mut AnyConnection,
        mut from: i64,
        want: i64,
        spent: &mut Spent,
        first_step: i64,
    ) -> sqlx::Result<Option<Vec<i64>>> {
        let mut docs = Vec::new();
        loop {
            docs.extend(self.merged(conn, from, want - docs.len() as i64).await?);
            if docs.len() as i64 >= want {
                // It stopped at its last match, somewhere within the step: counted as the
                // whole step.
                let fine = spent.charge(2 * self.step + STATEMENT_COST);
                return Ok(fine.then_some(docs));
            }
            let [(read_a, end_a), (read_b, end_b)] = self.step_ends(conn, from).await?;
            if !spent.charge(2 * (read_a + read_b) + 2 * STATEMENT_COST) {
                return Ok(None);
            }
            let step = self.step;
            let ended = |read: i64| read < step;
            let (short, short_read, long_end) = match (ended(read_a), ended(read_b)) {
                (true, true) => return Ok(Some(docs)),
                (false, false) => {
                    from = end_a.min(end_b);
                    self.step = (step * 2).min(first_step * MAX_STEP_GROWTH);
                    continue;
                }
                (true, false) => (0, read_a, end_b),
                (false, true) => (1, read_b, end_a),
            };
            // The long band's step settled every number up to its end.
            from = long_end;
            self.step = (step * 2).min(first_step * MAX_STEP_GROWTH);
            if short_read * LOOKUP_COST <= self.step {
                let (found, looked_up) = self.looked_up(conn, short, from).await?;
                docs.extend(found);
                let fine = spent.charge(looked_up * LOOKUP_COST + STATEMENT_COST);
                return Ok(fine.then_some(docs));
            }
        }
    }

    /// `SELECT doc FROM agent_postings WHERE term = … AND weight = … AND doc > from ORDER BY
    /// doc LIMIT step` for band `side`, to be closed with `)`.
    fn push_band(&self, query: &mut QueryBuilder<'static, Any>, side: usize, from: i64) {
        query.push(format!(
            "(SELECT doc FROM {} WHERE term = ",
            agent_postings::NAME
        ));
        query.push_bind(self.words[side].to_string());
        query.push(" AND weight = ");
        query.push_bind(if side == 0 { self.pair.0 } else { self.pair.1 });
        query.push(" AND doc > ");
        query.push_bind(from);
        query.push(" ORDER BY doc LIMIT ");
        query.push_bind(self.step);
    }

    /// Up to `want` agents numbered above `from` in both bands' next step of entries.
    async fn merged(
        &self,
        conn: &mut AnyConnection,
        from: i64,
        want: i64,
    ) -> sqlx::Result<Vec<i64>> {
        let dialect = Dialect::of(conn);
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {}(CAST(m.doc AS TEXT), ',' ORDER BY m.doc) FROM (SELECT a.doc AS doc FROM ",
            aggregate(dialect)
        ));
        self.push_band(&mut query, 0, from);
        query.push(") a JOIN ");
        self.push_band(&mut query, 1, from);
        query.push(") b ON b.doc = a.doc ORDER BY a.doc LIMIT ");
        query.push_bind(want);
        query.push(") m");
        let text: Option<String> = dialect
            .portable(query)
            .build_query_scalar()
            .fetch_one(&mut *conn)
            .await?;
        unpack_docs(text.as_deref().unwrap_or(""))
    }

    /// For each band, how many entries its next step from `from` holds (fewer than a step when
    /// the band ends within it) and the number of the last.
    async fn step_ends(
        &self,
        conn: &mut AnyConnection,
        from: i64,
    ) -> sqlx::Result<[(i64, i64); 2]> {
        let mut query = QueryBuilder::<Any>::new(
            "SELECT a.n, a.last, b.n, b.last FROM (SELECT count(*) AS n, max(doc) AS last FROM ",
        );
        self.push_band(&mut query, 0, from);
        query.push(") s) a, (SELECT count(*) AS n, max(doc) AS last FROM ");
        self.push_band(&mut query, 1, from);
        query.push(") s) b");
        let (read_a, end_a, read_b, end_b): (i64, Option<i64>, i64, Option<i64>) =
            Dialect::of(conn)
                .portable(query)
                .build_query_as()
                .fetch_one(&mut *conn)
                .await?;
        Ok([
            (read_a, end_a.unwrap_or(from)),
            (read_b, end_b.unwrap_or(from)),
        ])
    }

    /// The agents of band `short` numbered above `from` (fewer than a step) that have the other
    /// word at its weight, each looked up by number, and how many were looked up. The look-up is
    /// a subquery per agent, which PostgreSQL runs as one descent each: as a join or `EXISTS`
    /// it may read the other word's band whole instead.
    async fn looked_up(
        &self,
        conn: &mut AnyConnection,
        short: usize,
        from: i64,
    ) -> sqlx::Result<(Vec<i64>, i64)> {
        let dialect = Dialect::of(conn);
        let other = 1 - short;
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT {}(CAST(CASE WHEN (SELECT q.weight FROM {} q WHERE q.term = ",
            aggregate(dialect),
            agent_postings::NAME
        ));
        query.push_bind(self.words[other].to_string());
        query.push(" AND q.doc = d.doc) = ");
        query.push_bind(if other == 0 { self.pair.0 } else { self.pair.1 });
        query.push(" THEN d.doc END AS TEXT), ',' ORDER BY d.doc), count(*) FROM ");
        self.push_band(&mut query, short, from);
        query.push(") d");
        let (text, looked_up): (Option<String>, i64) = dialect
            .portable(query)
            .build_query_as()
            .fetch_one(&mut *conn)
            .await?;
        Ok((unpack_docs(text.as_deref().unwrap_or(""))?, looked_up))
    }
}

/// The aggregate joining numbers into one text (`NULL`s left out), so a statement's agents come
/// back as one row.
fn aggregate(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "group_concat",
        Dialect::Postgres => "string_agg",
    }
}

/// The numbers of an [`aggregate`]'s text.
fn unpack_docs(text: &str) -> sqlx::Result<Vec<i64>> {
    text.split(',')
        .filter(|doc| !doc.is_empty())
        .map(|doc| {
            doc.parse().map_err(|_| {
                sqlx::Error::Protocol(format!("a packed agent number is not a number: {doc:?}"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_come_by_descending_sum_with_equal_sums_together() {
        assert_eq!(
            levels(&[600, 400, 200], &[400, 200]),
            vec![
                (1000, vec![(600, 400)]),
                (800, vec![(600, 200), (400, 400)]),
                (600, vec![(400, 200), (200, 400)]),
                (400, vec![(200, 200)]),
            ]
        );
        assert!(levels(&[], &[400]).is_empty());
    }

    #[test]
    fn packed_numbers_are_read_back_and_a_bad_one_is_an_error() {
        assert_eq!(unpack_docs("3,17,40").unwrap(), [3, 17, 40]);
        assert_eq!(unpack_docs("").unwrap(), Vec::<i64>::new());
        assert!(unpack_docs("3,x").is_err());
    }
}
