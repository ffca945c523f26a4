//! Which pieces of a searched name a trigram index is asked for. Every row the index gives is
//! checked against the whole text afterwards, so rows holding pieces of it, in its order, find
//! every match; the best pieces leave out the words most names hold (`common_words`), whose
//! trigrams are in every row and narrow nothing while costing the index a walk of their whole
//! posting lists. The common words are set by the endpoint around planning
//! ([`with_common_words`]); without them, and for any text but a name, the index is asked for
//! the whole text.

use crate::common_words::{Words, words_of};
use agentindex_indexer::store::Dialect;

tokio::task_local! {
    /// The words common among the names searched, set around planning.
    static COMMON_WORDS: Words;
}

/// The field whose text the common words were sampled from.
const SAMPLED_FIELD: &str = "name";

/// Runs `plan` (which compiles filters) with `words` as the common words of names.
pub(crate) fn with_common_words<R>(words: Words, plan: impl FnOnce() -> R) -> R {
    COMMON_WORDS.sync_scope(words, plan)
}

/// The pattern bound to `dialect`'s trigram lookup (`Dialect::substring_match`) of `needle` in
/// the text of `field`: its rare pieces, under the common words in force, or the whole of it.
pub(super) fn index_pattern(dialect: Dialect, field: &str, needle: &str) -> String {
    let narrowed = COMMON_WORDS.try_with(|words| {
        if field != SAMPLED_FIELD || words.is_empty() {
            return None;
        }
        // Cut from the lowercase text, as the check and the index compare it: a piece cut from
        // the text as typed could lower differently from its place in the whole (a Greek final
        // sigma).
        let lowered = needle.to_lowercase();
        rare_pieces(&lowered, |word| words.contains(word))
            .map(|pieces| dialect.substring_pattern_of(&pieces))
    });
    narrowed
        .ok()
        .flatten()
        .unwrap_or_else(|| dialect.substring_pattern(needle))
}

/// The runs of `needle`'s words none of which is `common`, in order, each with the one
/// character before and after it when `needle` has them (a space there is a word's edge,
/// itself a trigram of the index), keeping the runs the index has a trigram of; `None` (ask for
/// the whole text) when no word is common or no run is left.
fn rare_pieces(needle: &str, common: impl Fn(&str) -> bool) -> Option<Vec<&str>> {
    // Each word's byte range and whether it is common.
    let words: Vec<(usize, usize, bool)> = words_of(needle)
        .map(|word| {
            let start = word.as_ptr() as usize - needle.as_ptr() as usize;
            (start, start + word.len(), common(word))
        })
        .collect();
    if !words.iter().any(|&(.., common)| common) {
        return None;
    }
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    for &(start, end, common) in &words {
        match (common, open) {
            (true, Some(run)) => {
                runs.push(run);
                open = None;
            }
            (true, None) => {}
            (false, Some((from, _))) => open = Some((from, end)),
            (false, None) => open = Some((start, end)),
        }
    }
    runs.extend(open);
    let pieces: Vec<&str> = runs
        .into_iter()
        .map(|(start, end)| {
            let before = needle[..start]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
            let after = needle[end..].chars().next().map_or(0, char::len_utf8);
            &needle[start - before..end + after]
        })
        .filter(|piece| has_trigram(piece))
        .collect();
    (!pieces.is_empty()).then_some(pieces)
}

/// Whether `piece` holds three ASCII letters or digits in a row: a trigram every database
/// locale indexes (under the `C` locale PostgreSQL's trigrams skip other characters).
fn has_trigram(piece: &str) -> bool {
    piece
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|run| run.len() >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'n>(needle: &'n str, common: &[&str]) -> Option<Vec<&'n str>> {
        rare_pieces(needle, |word| common.contains(&word))
    }

    #[test]
    fn the_common_words_are_left_to_the_check() {
        assert_eq!(pieces("agent 4567", &["agent"]), Some(vec![" 4567"]));
        assert_eq!(
            pieces("the weather agent", &["agent", "the"]),
            Some(vec![" weather "])
        );
        assert_eq!(pieces("4567 agent", &["agent"]), Some(vec!["4567 "]));
        // Every run of rare words, in order, each with its edges.
        assert_eq!(
            pieces("agent tokyo weather agent rain", &["agent"]),
            Some(vec![" tokyo weather ", " rain"])
        );
        assert_eq!(
            pieces("zebra agent quokka", &["agent"]),
            Some(vec!["zebra ", " quokka"])
        );
        // A run without a trigram of three ASCII characters is left to the check too.
        assert_eq!(
            pieces("agent 東京都 agent 4567", &["agent"]),
            Some(vec![" 4567"])
        );
    }

    #[test]
    fn the_whole_text_when_nothing_is_gained_or_nothing_is_left() {
        assert_eq!(pieces("weather 4567", &["agent"]), None);
        assert_eq!(pieces("agent bot", &["agent", "bot"]), None);
        // Two characters, a non-ASCII word, single letters: nothing the index can look up.
        assert_eq!(pieces("agent 12", &["agent"]), None);
        assert_eq!(pieces("agent 東京都", &["agent"]), None);
        assert_eq!(pieces("agent x_y_z", &["agent"]), None);
        assert_eq!(pieces("agent", &["agent"]), None);
        assert_eq!(pieces("", &["agent"]), None);
    }

    #[test]
    fn the_pattern_is_cut_from_the_lowercase_text_of_a_name_only() {
        let postgres = Dialect::Postgres;
        // Without common words set, the whole text as typed.
        assert_eq!(
            index_pattern(postgres, "name", "Agent 4567"),
            "%Agent 4567%"
        );
        let words: Words = std::sync::Arc::new(["agent".to_string()].into_iter().collect());
        let pattern = |field: &str, needle: &str| {
            with_common_words(words.clone(), || index_pattern(postgres, field, needle))
        };
        assert_eq!(pattern("name", "AGENT 4567"), "% 4567%");
        assert_eq!(pattern("name", "Zebra Agent X_4567"), "%zebra % x\\_4567%");
        // A final sigma cut off from the rest is written as the whole text lowers it.
        assert_eq!(pattern("name", "AGENT ΣΟΦΟΣ.AI9"), "% σοφοσ.ai9%");
        // The words were sampled from names: a description is asked for whole.
        assert_eq!(pattern("description", "Agent 4567"), "%Agent 4567%");
    }
}
