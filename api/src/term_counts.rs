//! How many agents hold a skill or tag term, kept between requests for sizing list walks
//! (`read::agent_walk::walk_budget`). A count only sizes how far a walk goes before it falls
//! back to collecting, never which agents are listed, so one a minute old serves as well as a
//! fresh one; counting a term a million agents hold reads its whole index range, which every
//! filtered page at a million agents paid before. An entry past its minute is counted again
//! by the one request that finds it so, while the others go on with the old number. Terms
//! are chosen by callers: only short ones are kept, and at most [`MAX_TERMS`] of them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a count is used before it is counted again.
const FRESH_FOR: Duration = Duration::from_secs(60);
/// Terms kept at most; past that, the ones out of date are dropped, then all.
pub(crate) const MAX_TERMS: usize = 4_096;
/// Longest term kept, in bytes (skills and tags are words; a longer one is counted each time).
const MAX_TERM_BYTES: usize = 128;

/// A term and its kind (`skill` also matches tags, `tag` only tags).
type TermKey = (String, &'static str);

/// Counts of agents per term, with when each was counted.
#[derive(Debug, Default)]
pub(crate) struct TermCounts {
    entries: Mutex<HashMap<TermKey, (i64, Instant)>>,
}

/// What [`TermCounts::look_up`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Known {
    /// A count to use as it is.
    Count(i64),
    /// None, or one out of date that this caller is now to count again (others meanwhile
    /// keep using the old one).
    CountIt,
}

impl TermCounts {
    /// The count of `term` of `kind`, as of `now`.
    pub(crate) fn look_up(&self, term: &str, kind: &'static str, now: Instant) -> Known {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get_mut(&(term.to_string(), kind)) {
            Some((count, counted)) if now.duration_since(*counted) < FRESH_FOR => {
                Known::Count(*count)
            }
            Some((_, counted)) => {
                // Claimed: the next callers within the minute use the old number.
                *counted = now;
                Known::CountIt
            }
            None => Known::CountIt,
        }
    }

    /// Keeps `count` as the number of agents holding `term` of `kind`, counted at `now`.
    pub(crate) fn keep(&self, term: &str, kind: &'static str, count: i64, now: Instant) {
        if term.len() > MAX_TERM_BYTES {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= MAX_TERMS && !entries.contains_key(&(term.to_string(), kind)) {
            entries.retain(|_, (_, counted)| now.duration_since(*counted) < FRESH_FOR);
            if entries.len() >= MAX_TERMS {
                entries.clear();
            }
        }
        entries.insert((term.to_string(), kind), (count, now));
    }

    /// Terms kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_used_for_a_minute_then_one_caller_counts_again() {
        let counts = TermCounts::default();
        let start = Instant::now();
        assert_eq!(counts.look_up("translate", "skill", start), Known::CountIt);
        counts.keep("translate", "skill", 83_000, start);
        assert_eq!(
            counts.look_up("translate", "skill", start + Duration::from_secs(59)),
            Known::Count(83_000)
        );
        assert_eq!(
            counts.look_up("translate", "tag", start),
            Known::CountIt,
            "the kinds are apart"
        );
        let later = start + FRESH_FOR;
        assert_eq!(counts.look_up("translate", "skill", later), Known::CountIt);
        assert_eq!(
            counts.look_up("translate", "skill", later + Duration::from_secs(1)),
            Known::Count(83_000),
            "while one caller counts again, the others use the old number"
        );
        counts.keep("translate", "skill", 84_000, later + Duration::from_secs(2));
        assert_eq!(
            counts.look_up("translate", "skill", later + Duration::from_secs(3)),
            Known::Count(84_000)
        );
    }

    #[test]
    fn long_terms_are_not_kept_and_the_terms_kept_are_bounded() {
        let counts = TermCounts::default();
        let now = Instant::now();
        let long = "x".repeat(MAX_TERM_BYTES + 1);
        counts.keep(&long, "tag", 1, now);
        assert_eq!(counts.look_up(&long, "tag", now), Known::CountIt);
        for n in 0..MAX_TERMS + 10 {
            counts.keep(&format!("term{n}"), "tag", 1, now);
            assert!(counts.len() <= MAX_TERMS);
        }
        let last = format!("term{}", MAX_TERMS + 9);
        assert_eq!(counts.look_up(&last, "tag", now), Known::Count(1));
    }
}
