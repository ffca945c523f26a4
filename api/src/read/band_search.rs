//! The best page of a plain search of two words, read weight band by weight band: how
//! PostgreSQL ranks one without looking agents up one by one.
//!
//! A word's postings take a limited set of weights (a word's count in an agent's name, skills
//! or tags and description, each saturating: dozens of values at most, a few in most lists), so
//! every agent with both words falls in one pair of bands, one of each word, and its relevance
//! is that pair's sum. Pairs are taken by descending sum; the agents of one pair are the
//! intersection of two runs of `agent_postings_impact` (`term, weight, doc`), each already in
//! number order, which PostgreSQL merges as two index-only range scans, stopping at the page's
//! last row. Where `ranked_search` looks each agent met up in the other word's list (an index
//! descent each, about 150 a round), a pair reads neighbouring index entries: at a million
//! agents a page of "search tag7" reads 47 buffers this way against about 2,400. A band much
//! shorter than what is left of its partner has its agents looked up instead. A search that
//! would read more than [`Reads::budget`] entries, or send more statements than that pays for,
//! is given back to the caller, which ranks it the other way. Every read of one search sees one
//! snapshot (a read-only transaction), so an agent whose weight changes meanwhile is neither
//! missed nor listed twice.

use super::band_merge::{self, Pair, Step, Stepped};
use super::snapshot;
use sqlx::AnyConnection;
use std::collections::BTreeSet;

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
const MAX_BANDS: i64 = 64;

/// How much a ranking may read, in index entries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads {
    /// Entries of each band a pair's first merge step reads at most; each further step of the
    /// pair reads twice as many, up to [`MAX_STEP_GROWTH`] times this.
    pub(crate) step: i64,
    /// Entries a whole search may read: each statement is paid for before it is sent, at
    /// [`STATEMENT_COST`] and the most it can read (a merge step its whole step of both bands,
    /// twice: merged, then counted; a look-up [`LOOKUP_COST`] an agent), and what a merge step
    /// did not read is given back after. A statement that does not fit gives the search back.
    pub(crate) budget: i64,
}

/// Pairs stepped by one statement at most (SQLite allows 500 parts to a compound `SELECT`).
const MAX_STEPS_AT_ONCE: usize = 32;
/// The most a pair's merge step grows to, as a multiple of its first.
const MAX_STEP_GROWTH: i64 = 16;
/// What sending a statement costs against the budget, in entries, whatever it reads (a round
/// trip is worth thousands of neighbouring entries): the budget pays for 64 at most. The pairs
/// are stepped several at a time (twice as many in each statement), so a search of words with
/// many weights needs few statements.
const STATEMENT_COST: i64 = 4_096;
/// What looking one agent up by number costs, in entries: a descent of the index (a few pages,
/// a search within each) against the next entry of a page already read, for a merge.
const LOOKUP_COST: i64 = 32;

impl Default for Reads {
    fn default() -> Self {
        Reads {
            step: 4_096,
            budget: 64 * STATEMENT_COST,
        }
    }
}

/// Entries paid for so far, against the budget.
struct Spent {
    entries: i64,
    budget: i64,
}

impl Spent {
    /// Gives back `entries` paid for and not read.
    fn refund(&mut self, entries: i64) {
        self.entries -= entries.max(0);
    }

    /// Pays for a statement that reads at most `entries`; `false`, paying nothing, when it
    /// does not fit the budget.
    fn pay(&mut self, entries: i64) -> bool {
        let after = self.entries + STATEMENT_COST + entries;
        let fits = after <= self.budget;
        if fits {
            self.entries = after;
        }
        fits
    }
}

/// A band pair as the ranking goes: its relevance, where its next step starts and how long it
/// is, the agents found so far, and whether it is settled (every agent it can add to the page
/// found).
#[derive(Debug)]
struct Pairing {
    score: i64,
    pair: Pair,
    from: i64,
    step: i64,
    docs: Vec<i64>,
    settled: bool,
}

/// Up to `limit` agents having both `words` after `after`, best first, with their relevance
/// (ties to the lower number); `None` when a word has more than [`MAX_BANDS`] weights or the
/// ranking does not fit its budget.
pub(crate) async fn best_of_pair(
    conn: &mut AnyConnection,
    words: [&str; 2],
    after: Option<After>,
    limit: i64,
    reads: Reads,
) -> sqlx::Result<Option<Vec<(i64, i64)>>> {
    let mut snapshot = snapshot::begin(conn).await?;
    let page = ranked(&mut snapshot, words, after, limit, reads).await?;
    snapshot.commit().await?;
    Ok(page)
}

/// [`best_of_pair`] within its snapshot. Pairs are taken in order of relevance: each statement
/// steps the open pairs of the highest level not yet on the page (with, from the third, the
/// next pairs after them started ahead: one, then twice as many each time, so words of many
/// weights need few statements); a level goes on the page once every pair of it is settled.
async fn ranked(
    conn: &mut AnyConnection,
    words: [&str; 2],
    after: Option<After>,
    limit: i64,
    reads: Reads,
) -> sqlx::Result<Option<Vec<(i64, i64)>>> {
    let mut spent = Spent {
        entries: 0,
        budget: reads.budget,
    };
    let mut bands = Vec::new();
    for word in words {
        if !spent.pay(MAX_BANDS + 1) {
            return Ok(None);
        }
        let weights = band_merge::weights(conn, word, MAX_BANDS).await?;
        if weights.len() as i64 > MAX_BANDS {
            return Ok(None);
        }
        bands.push(weights);
    }
    let mut pairs = pairings(&bands[0], &bands[1], after, reads.step);
    let largest_step = reads.step * MAX_STEP_GROWTH;
    let mut page: Vec<(i64, i64)> = Vec::new();
    // `started`: every pair below it has been stepped (so an open one of them is stepped on).
    // `ahead`: pairs past the current level started with it: none in the first two statements
    // (most searches end there), then one, twice as many each statement after.
    let (mut level, mut started, mut ahead, mut statements) = (0, 0, 0, 0);
    while level < pairs.len() {
        let level_end = level
            + pairs[level..]
                .iter()
                .take_while(|p| p.score == pairs[level].score)
                .count();
        if pairs[level..level_end].iter().all(|p| p.settled) {
            let want = (limit - page.len() as i64) as usize;
            let found: BTreeSet<i64> = pairs[level..level_end]
                .iter()
                .flat_map(|p| p.docs.iter().copied())
                .collect();
            let score = pairs[level].score;
            page.extend(found.into_iter().take(want).map(|doc| (doc, score)));
            if page.len() as i64 >= limit {
                break;
            }
            level = level_end;
            continue;
        }
        let want = limit - page.len() as i64;
        let next = (level_end.max(started) + ahead).min(pairs.len());
        let stepping: Vec<usize> = (level..next)
            .filter(|&i| !pairs[i].settled)
            .take(MAX_STEPS_AT_ONCE)
            .collect();
        let mut steps: Vec<Step> = stepping
            .iter()
            .map(|&i| Step {
                pair: pairs[i].pair,
                from: pairs[i].from,
                step: pairs[i].step,
                want: want - pairs[i].docs.len() as i64,
            })
            .collect();
        // As many pairs as the budget can pay for at the most each can read; what they did
        // not read is given back after.
        while !steps.is_empty() && !spent.pay(steps.iter().map(|s| 4 * s.step).sum()) {
            steps.pop();
        }
        if steps.is_empty() {
            return Ok(None);
        }
        let stepped = band_merge::merge_steps(conn, words, &steps).await?;
        for ((&i, step), stepped) in stepping.iter().zip(&steps).zip(stepped) {
            spent.refund(4 * step.step - stepped.entries_read(step.step));
            let pairing = &mut pairs[i];
            if let Some((short, rest)) = pairing.advance(stepped, largest_step) {
                if !spent.pay(rest * LOOKUP_COST) {
                    return Ok(None);
                }
                let p = &*pairing;
                let found =
                    band_merge::looked_up(conn, words, p.pair, short, p.from, p.step).await?;
                pairing.docs.extend(found);
                pairing.settled = true;
            }
        }
        let stepping = &stepping[..steps.len()];
        started = started.max(stepping.last().map_or(0, |i| i + 1));
        statements += 1;
        if statements >= 2 {
            ahead = (ahead * 2).clamp(1, MAX_STEPS_AT_ONCE);
        }
    }
    Ok(Some(page))
}

/// Every pair of `first`'s and `second`'s weights that can follow `after`, by relevance, each
/// to start at its first step.
fn pairings(first: &[i64], second: &[i64], after: Option<After>, step: i64) -> Vec<Pairing> {
    let mut pairs: Vec<Pairing> = first
        .iter()
        .flat_map(|a| second.iter().map(move |b| (*a, *b)))
        .filter(|(a, b)| after.is_none_or(|after| a + b <= after.score))
        .map(|pair| Pairing {
            score: pair.0 + pair.1,
            pair,
            from: match after {
                Some(after) if after.score == pair.0 + pair.1 => after.doc,
                _ => i64::MIN,
            },
            step,
            docs: Vec::new(),
            settled: false,
        })
        .collect();
    pairs.sort_by(|x, y| y.score.cmp(&x.score).then(y.pair.cmp(&x.pair)));
    pairs
}

impl Pairing {
    /// Takes in one merge step: the agents it found, and where the next starts. Settled when
    /// the step found what it was asked for or both bands ended; when only one band ended
    /// within the step, settled if the short band has nothing past the long band's step, or
    /// `Some(short band)` when its rest should be looked up in the other word's list: when that
    /// costs less than merging on to the short band's last number at the long band's density
    /// so far (with the most agents that rest holds). Otherwise the next step goes on from where both bands' steps are settled
    /// (the nearer end), twice as long, up to `largest_step`.
    fn advance(&mut self, stepped: Stepped, largest_step: i64) -> Option<(usize, i64)> {
        self.docs.extend(stepped.docs);
        let Some([(read_a, end_a), (read_b, end_b)]) = stepped.bands else {
            self.settled = true;
            return None;
        };
        let step = self.step;
        let ended = |read: i64| read < step;
        let (short, short_read, short_end, long_end) = match (ended(read_a), ended(read_b)) {
            (true, true) => {
                self.settled = true;
                return None;
            }
            (false, false) => {
                self.from = end_a.min(end_b);
                self.step = (step * 2).min(largest_step);
                return None;
            }
            (true, false) => (0, read_a, end_a, end_b),
            (false, true) => (1, read_b, end_b, end_a),
        };
        if short_end <= long_end {
            self.settled = true;
            return None;
        }
        // Numbers start at 1: a first step from the start covered them from there.
        let density = step as f64 / (long_end - self.from.max(0)).max(1) as f64;
        let merging = density * (short_end - long_end) as f64 + short_read as f64;
        self.from = long_end;
        if (short_read * LOOKUP_COST) as f64 <= merging {
            // The short band's rest is within a step of this length.
            return Some((short, short_read));
        }
        self.step = (step * 2).min(largest_step);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_come_by_descending_relevance_and_after_a_cursor_only_those_that_can_follow() {
        let order = |after| {
            pairings(&[600, 400, 200], &[400, 200], after, 16)
                .iter()
                .map(|p| (p.pair, p.from))
                .collect::<Vec<_>>()
        };
        let start = i64::MIN;
        assert_eq!(
            order(None),
            [
                ((600, 400), start),
                ((600, 200), start),
                ((400, 400), start),
                ((400, 200), start),
                ((200, 400), start),
                ((200, 200), start),
            ]
        );
        let after = After {
            score: 800,
            doc: 77,
        };
        assert_eq!(
            order(Some(after)),
            [
                ((600, 200), 77),
                ((400, 400), 77),
                ((400, 200), start),
                ((200, 400), start),
                ((200, 200), start),
            ]
        );
    }

    #[test]
    fn a_statement_is_paid_for_before_it_is_sent_or_not_at_all() {
        let mut spent = Spent {
            entries: 0,
            budget: 2 * STATEMENT_COST + 100,
        };
        assert!(spent.pay(60));
        assert!(!spent.pay(STATEMENT_COST));
        assert_eq!(spent.entries, STATEMENT_COST + 60);
        assert!(spent.pay(40));
        assert!(!spent.pay(0));
    }
}
