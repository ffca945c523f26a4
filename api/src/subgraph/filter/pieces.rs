//! Which piece of a searched text a trigram index is asked for. Every row the index gives is
//! checked against the whole text afterwards, so any piece of it finds every match; the best
//! piece leaves out the words most names hold (`common_words`), whose trigrams are in every
//! row and narrow nothing while costing the index a walk of their whole posting lists. The
//! common words are set by the endpoint around planning ([`with_common_words`]).

use crate::common_words::{Words, words_of};

tokio::task_local! {
    /// The words common among the names searched, set around planning.
    static COMMON_WORDS: Words;
}

/// Runs `plan` (which compiles filters) with `words` as the common words of names.
pub(crate) fn with_common_words<R>(words: Words, plan: impl FnOnce() -> R) -> R {
    COMMON_WORDS.sync_scope(words, plan)
}

/// The piece of `needle` to ask the trigram index for, under the common words in force.
pub(super) fn index_piece(needle: &str) -> &str {
    COMMON_WORDS
        .try_with(|words| rare_piece(needle, |word| words.contains(&word.to_lowercase())))
        .unwrap_or(needle)
}

/// Letters and digits a piece needs for the index to have a trigram of it to look up.
const MIN_PIECE: usize = 3;

/// The longest run of `needle`'s words none of which is `common`, with the one character
/// before and after it when `needle` has them (a space there is a word's edge, itself a
/// trigram of the index); `needle` whole when no word is common, when every word is, or when
/// the longest run is too short to look up.
pub(crate) fn rare_piece(needle: &str, common: impl Fn(&str) -> bool) -> &str {
    // Each word's byte range and whether it is common.
    let words: Vec<(usize, usize, bool)> = words_of(needle)
        .map(|word| {
            let start = word.as_ptr() as usize - needle.as_ptr() as usize;
            (start, start + word.len(), common(word))
        })
        .collect();
    if !words.iter().any(|&(.., common)| common) {
        return needle;
    }
    let mut best: Option<(usize, usize, usize)> = None;
    let mut run: Option<(usize, usize, usize)> = None;
    for &(start, end, common) in &words {
        if common {
            run = None;
            continue;
        }
        let letters = needle[start..end].chars().count();
        let grown = match run {
            Some((from, _, held)) => (from, end, held + letters),
            None => (start, end, letters),
        };
        run = Some(grown);
        if best.is_none_or(|(.., held)| grown.2 > held) {
            best = Some(grown);
        }
    }
    match best {
        Some((start, end, letters)) if letters >= MIN_PIECE => {
            let before = needle[..start]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
            let after = needle[end..].chars().next().map_or(0, char::len_utf8);
            &needle[start - before..end + after]
        }
        _ => needle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece<'n>(needle: &'n str, common: &[&str]) -> &'n str {
        rare_piece(needle, |word| {
            common.contains(&word.to_lowercase().as_str())
        })
    }

    #[test]
    fn the_common_words_are_left_to_the_check() {
        assert_eq!(piece("agent 4567", &["agent"]), " 4567");
        assert_eq!(piece("Agent 4567", &["agent"]), " 4567");
        assert_eq!(piece("the weather agent", &["agent", "the"]), " weather ");
        assert_eq!(piece("4567 agent", &["agent"]), "4567 ");
        // The longest run of rare words, with its edges.
        assert_eq!(
            piece("agent tokyo weather agent rain", &["agent"]),
            " tokyo weather "
        );
        assert_eq!(piece("é agent Zürich", &["agent"]), " Zürich");
    }

    #[test]
    fn the_whole_text_when_nothing_is_gained_or_too_little_is_left() {
        assert_eq!(piece("weather 4567", &["agent"]), "weather 4567");
        assert_eq!(piece("agent bot", &["agent", "bot"]), "agent bot");
        // Two letters give the index no trigram to look up.
        assert_eq!(piece("agent 12", &["agent"]), "agent 12");
        assert_eq!(piece("agent", &["agent"]), "agent");
        assert_eq!(piece("", &["agent"]), "");
    }

    #[test]
    fn without_common_words_set_the_whole_text_is_asked() {
        assert_eq!(index_piece("agent 4567"), "agent 4567");
        let words: Words = std::sync::Arc::new(["agent".to_string()].into_iter().collect());
        assert_eq!(
            with_common_words(words, || index_piece("AGENT 4567")),
            " 4567"
        );
    }
}
