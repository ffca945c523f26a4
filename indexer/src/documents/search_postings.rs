//! The words of an agent's search text and how much each weighs: the rows of `agent_postings`,
//! from which a full-text search ranks its best matches without scoring every match.
//!
//! Words are split and folded as SQLite's FTS5 `unicode61 remove_diacritics 2` tokenizer does
//! (letters and digits, lower case, accents dropped), so the words a search finds through the
//! full-text index are the words it ranks here. An agent's weight for a word is the sum over its
//! fields of the field's weight times a saturating count of the word's occurrences there (BM25's
//! term-frequency part with k1 = 1.2, without length normalisation, so a weight never changes
//! because other agents changed): the name weighs 1000, skills and tags 400, the description 200.
//! A search's relevance is the sum of its words' weights.

use std::collections::BTreeMap;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// How quickly repeated occurrences stop adding weight (BM25's k1).
const SATURATION: f64 = 1.2;

/// The weight of one occurrence in each field.
const NAME: f64 = 1000.0;
const SKILLS_AND_TAGS: f64 = 400.0;
const DESCRIPTION: f64 = 200.0;

/// The words of `text` as the full-text index splits them: runs of letters and digits, lower
/// case, without accents.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(fold)
        .filter(|w| !w.is_empty())
        .collect()
}

/// `word` in lower case without its combining marks (`Café` → `cafe`).
fn fold(word: &str) -> String {
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The search text of one agent, field by field.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchText<'a> {
    /// The agent's name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its skills' names and descriptions.
    pub skills: &'a str,
    /// Its skills' tags and its own.
    pub tags: &'a str,
}

/// Each distinct word of `text` and its weight, in word order.
pub fn postings(text: SearchText<'_>) -> Vec<(String, i64)> {
    // Occurrences per word: (name, skills and tags, description).
    let mut counts: BTreeMap<String, [u32; 3]> = BTreeMap::new();
    let fields = [
        (text.name, 0),
        (text.skills, 1),
        (text.tags, 1),
        (text.description, 2),
    ];
    for (field, class) in fields {
        for word in words(field) {
            counts.entry(word).or_default()[class] += 1;
        }
    }
    counts
        .into_iter()
        .map(|(word, [name, skills_and_tags, description])| {
            let weight = NAME * saturated(name)
                + SKILLS_AND_TAGS * saturated(skills_and_tags)
                + DESCRIPTION * saturated(description);
            (word, weight.round() as i64)
        })
        .collect()
}

/// `count` occurrences as BM25 counts them: one is 1, each more adds less, never past k1 + 1.
fn saturated(count: u32) -> f64 {
    let count = f64::from(count);
    count * (SATURATION + 1.0) / (count + SATURATION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_folded_and_stripped_of_accents() {
        assert_eq!(
            words("Café-Bot: translate_TEXT, 42x Ünïcode"),
            ["cafe", "bot", "translate", "text", "42x", "unicode"]
        );
        assert!(words(" ,;- ").is_empty());
    }

    #[test]
    fn a_name_outweighs_skills_and_tags_which_outweigh_a_description() {
        let weights: BTreeMap<String, i64> = postings(SearchText {
            name: "Weather agent",
            description: "Reports weather, rain and forecast",
            skills: "forecast",
            tags: "rain rain",
        })
        .into_iter()
        .collect();
        assert_eq!(weights["agent"], 1000);
        // in the name and the description
        assert_eq!(weights["weather"], 1200);
        // once in the skills, once in the description
        assert_eq!(weights["forecast"], 600);
        // twice in the tags (saturating: 2 × 2.2 / 3.2 = 1.375), once in the description
        assert_eq!(weights["rain"], 750);
        assert_eq!(weights["reports"], 200);
        assert_eq!(weights.len(), 6);
    }

    #[test]
    fn repeating_a_word_cannot_outweigh_a_heavier_field() {
        let stuffed = "spam ".repeat(10_000);
        let weights = postings(SearchText {
            description: &stuffed,
            ..SearchText::default()
        });
        assert_eq!(weights, [("spam".to_string(), 440)]);
        let in_name = postings(SearchText {
            name: "spam",
            ..SearchText::default()
        });
        assert!(in_name[0].1 > weights[0].1);
    }
}
