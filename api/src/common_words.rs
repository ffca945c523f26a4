//! The words common among agents' names, kept between requests so a name search on PostgreSQL
//! looks its trigram index up by the rare part of what it is asked (`subgraph::filter::pieces`).
//! A trigram every name holds ("age" of "Agent") costs the index a walk of a posting list as
//! long as the table for every search that names it (4 of the 4.5 ms of a search for "agent
//! 4567" among a million agents), and narrows nothing. Which words are common is read from a
//! sample of about [`SAMPLE_ROWS`] names, again after [`FRESH_FOR`] in the background: a word in
//! more than one name in [`COMMON_SHARE`] of the sample is common. The set only decides which part of a
//! search the index is asked for; every match is still checked against the whole text, so a
//! stale or empty set costs time, never an answer.

use agentindex_indexer::schema::agent_registration_text;
use agentindex_indexer::store::{Dialect, Store};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a sample's words are used before the names are sampled again.
const FRESH_FOR: Duration = Duration::from_secs(300);
/// Names read per sample, about (PostgreSQL samples whole pages).
const SAMPLE_ROWS: f64 = 2_000.0;
/// A word in more than one sampled name in this many is common.
const COMMON_SHARE: usize = 10;
/// Longest the first request waits for the first sample.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// Fewer names than this sampled say nothing about which words are common.
const MIN_SAMPLE: usize = 100;

/// Words common among names, lowercase.
pub(crate) type Words = Arc<HashSet<String>>;

/// The last sample's common words, and when they were asked for.
#[derive(Debug, Default)]
pub(crate) struct CommonWords {
    sampled: Mutex<Option<(Words, Instant)>>,
}

/// What [`CommonWords::claim`] tells a caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Use the words there are.
    Use,
    /// Sample the names for the first time, and use what that finds.
    First,
    /// Sample again in the background; use the old words meanwhile.
    Again,
}

impl CommonWords {
    /// The common words of `store`'s names as last sampled (none on SQLite, whose full-text
    /// trigram index is asked the whole text). The first request samples them, waiting at most
    /// [`FIRST_WAIT`]; later samples run in the background, started by the first request to
    /// find the words out of date, so no request waits for them. Meanwhile every other request
    /// goes on with the words there are (none before the first sample lands).
    pub(crate) async fn of(self: &Arc<Self>, store: &Store) -> Words {
        if store.dialect() != Dialect::Postgres {
            return Words::default();
        }
        let (words, claim) = self.claim(Instant::now());
        match claim {
            Claim::Use => words,
            Claim::First => {
                let sampled = tokio::time::timeout(FIRST_WAIT, self.sample(store)).await;
                if sampled.is_err() {
                    tracing::warn!(
                        "sampling agents' names for their common words took over {FIRST_WAIT:?}"
                    );
                }
                self.claim(Instant::now()).0
            }
            Claim::Again => {
                let me = Arc::clone(self);
                let store = store.clone();
                tokio::spawn(async move { me.sample(&store).await });
                words
            }
        }
    }

    /// The words to use at `now`, and whether this caller is to sample (claimed: the others
    /// do not until [`FRESH_FOR`] has passed again, whether or not the sample succeeds).
    fn claim(&self, now: Instant) -> (Words, Claim) {
        let mut sampled = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
        match sampled.as_mut() {
            Some((words, at)) if now.duration_since(*at) < FRESH_FOR => {
                (Arc::clone(words), Claim::Use)
            }
            Some((words, at)) => {
                *at = now;
                (Arc::clone(words), Claim::Again)
            }
            None => {
                *sampled = Some((Words::default(), now));
                (Words::default(), Claim::First)
            }
        }
    }

    /// Samples `store`'s names and keeps their common words; a failure is logged and the old
    /// words kept until the next claim.
    async fn sample(&self, store: &Store) {
        match sample_names(store).await {
            Ok(names) => {
                let words = Arc::new(common_in(&names));
                let mut sampled = self.sampled.lock().unwrap_or_else(|e| e.into_inner());
                if let Some((kept, _)) = sampled.as_mut() {
                    *kept = words;
                }
            }
            Err(e) => tracing::warn!(error = %e, "sampling agents' names for their common words"),
        }
    }

    /// Keeps `words` as sampled at `at` (for tests of the claims).
    #[cfg(test)]
    fn keep(&self, words: Words, at: Instant) {
        *self.sampled.lock().unwrap() = Some((words, at));
    }
}

/// About [`SAMPLE_ROWS`] names of agents, read from pages picked at random; at most four times
/// as many whatever the table's statistics say (a table never analyzed is read from its start).
async fn sample_names(store: &Store) -> sqlx::Result<Vec<String>> {
    let table = agent_registration_text::NAME;
    let rows: Option<f64> = sqlx::query_scalar(
        "SELECT CAST(reltuples AS DOUBLE PRECISION) FROM pg_class WHERE oid = to_regclass($1)",
    )
    .bind(table)
    .fetch_optional(store.reader())
    .await?;
    let percent = match rows {
        Some(rows) if rows > SAMPLE_ROWS => 100.0 * SAMPLE_ROWS / rows,
        _ => 100.0,
    };
    // TABLESAMPLE takes no bind parameter; the percentage is a number formatted here.
    sqlx::query_scalar(&format!(
        "SELECT name FROM {table} TABLESAMPLE SYSTEM ({percent:.6}) WHERE name IS NOT NULL
          LIMIT {}",
        SAMPLE_ROWS as i64 * 4
    ))
    .persistent(false)
    .fetch_all(store.reader())
    .await
}

/// The words (runs of letters and digits, lowercase) in more than one of [`COMMON_SHARE`] of
/// `names`; none when there are too few names to tell.
fn common_in(names: &[String]) -> HashSet<String> {
    if names.len() < MIN_SAMPLE {
        return HashSet::new();
    }
    let mut holders: HashMap<String, usize> = HashMap::new();
    for name in names {
        let words: HashSet<String> = words_of(name).map(str::to_lowercase).collect();
        for word in words {
            *holders.entry(word).or_default() += 1;
        }
    }
    holders
        .into_iter()
        .filter(|(_, held)| held * COMMON_SHARE > names.len())
        .map(|(word, _)| word)
        .collect()
}

/// The words of `text`: its runs of letters and digits.
pub(crate) fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(count: usize, name: impl Fn(usize) -> String) -> Vec<String> {
        (0..count).map(name).collect()
    }

    #[test]
    fn a_word_in_more_than_a_tenth_of_the_names_is_common() {
        let sample = names(1_000, |n| match n % 20 {
            0..=2 => format!("Weather Bot {n}"),
            3 => format!("Oracle-{n}"),
            _ => format!("AGENT {n}"),
        });
        let common = common_in(&sample);
        let mut words: Vec<&str> = common.iter().map(String::as_str).collect();
        words.sort();
        // "agent" in 800 of 1,000, "weather" and "bot" in 150; "oracle" in 50, a number in one.
        assert_eq!(words, ["agent", "bot", "weather"]);
    }

    #[test]
    fn one_caller_samples_at_first_and_again_once_the_words_are_out_of_date() {
        let common = CommonWords::default();
        let start = Instant::now();
        assert_eq!(common.claim(start), (Words::default(), Claim::First));
        assert_eq!(
            common.claim(start + Duration::from_secs(1)),
            (Words::default(), Claim::Use),
            "the others go on without waiting for it"
        );
        let sampled: Words = Arc::new(["agent".to_string()].into_iter().collect());
        common.keep(Arc::clone(&sampled), start);
        assert_eq!(
            common.claim(start + Duration::from_secs(2)),
            (Arc::clone(&sampled), Claim::Use)
        );
        let later = start + FRESH_FOR;
        assert_eq!(common.claim(later), (Arc::clone(&sampled), Claim::Again));
        assert_eq!(
            common.claim(later + Duration::from_secs(1)),
            (sampled, Claim::Use),
            "while one caller samples again, the others use the old words"
        );
    }

    #[test]
    fn a_word_repeated_in_one_name_counts_once_and_small_samples_say_nothing() {
        let sample = names(200, |n| {
            if n < 15 {
                "echo echo echo".into()
            } else {
                format!("{n}")
            }
        });
        assert!(common_in(&sample).is_empty(), "15 names of 200 hold echo");
        let few = names(MIN_SAMPLE - 1, |_| "agent".into());
        assert!(common_in(&few).is_empty());
    }
}
