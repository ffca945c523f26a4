//! The best page of a plain full-text search, read from `agent_postings` heaviest first instead
//! of scoring every agent that matches.
//!
//! An agent matches when it has every word; its relevance is the sum of its weights for them
//! (`documents::search_postings`), ties going to the lower number in `search_agents`. Each word's postings
//! are read from the top of its `agent_postings_impact` range, a few more each round; every agent
//! met there has its other words' weights looked up by number. No agent not yet met can beat the
//! sum of the weights each list was last read at, so once a page of matches is at or above that
//! sum the page is final (Fagin's threshold algorithm). A word's list read to its end means every
//! match has been met. When the lists would have to be read too deep, the caller ranks every
//! match instead (`agent_filters::push_search_rows`), with the same relevance. On PostgreSQL a
//! search of two words is ranked band by band first (`band_search`).

use super::band_search;
pub(crate) use super::band_search::After;
use agentindex_indexer::documents::search_postings;
use agentindex_indexer::schema::agent_postings;
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, AnyPool, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// Rows read from each word's list in the first round, per row of the page.
const FIRST_DEPTH_PER_ROW: i64 = 8;
/// The deepest a list is read before the search is ranked whole instead.
const MAX_DEPTH: i64 = 8_192;

/// The words of a search, as `agent_postings` holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchWords {
    /// Words an agent must have whole.
    pub(crate) whole: Vec<String>,
    /// A word an agent must have a word starting with (the last, typed as a prefix).
    pub(crate) prefix: Option<String>,
}

impl SearchWords {
    /// The words of an FTS5 query of quoted words, the last perhaps a prefix (`"word"*`), folded
    /// as the index folds them.
    pub(crate) fn of(fts5: &str) -> SearchWords {
        let mut words: Vec<String> = fts5.split('"').flat_map(search_postings::words).collect();
        let prefix = fts5
            .trim_end()
            .ends_with('*')
            .then(|| words.pop())
            .flatten();
        let mut seen = BTreeSet::new();
        words.retain(|w| seen.insert(w.clone()));
        SearchWords {
            whole: words,
            prefix,
        }
    }
}

/// A word's list as read: agents' numbers and weights, heaviest first.
type List = Vec<(i64, i64)>;

/// The agents met in the lists, by number: the sum of their weights, `None` when they lack a
/// word.
type Scores = BTreeMap<i64, Option<i64>>;

/// A page of a search's best matches.
#[derive(Debug)]
pub(crate) struct Ranked {
    /// Agents' numbers with their relevance, best first.
    pub(crate) page: Vec<(i64, i64)>,
    /// The deepest any word's list was asked to be read (for the trace; 0 when ranked band by
    /// band).
    pub(crate) depth: i64,
}

/// Up to `limit` agents having every word of `words` after `after`, best first, with their
/// relevance; `None` when the lists would have to be read deeper than [`MAX_DEPTH`] (the
/// caller ranks every match).
pub(crate) async fn best(
    pool: &AnyPool,
    words: &[String],
    after: Option<After>,
    limit: i64,
) -> sqlx::Result<Option<Ranked>> {
    if words.is_empty() || limit <= 0 {
        return Ok(Some(Ranked {
            page: Vec::new(),
            depth: 0,
        }));
    }
    // One connection for every read of the ranking.
    let mut conn = pool.acquire().await?;
    let conn = &mut *conn;
    if let ([first, second], Dialect::Postgres) = (words, Dialect::of(conn)) {
        let pair = [first.as_str(), second.as_str()];
        let reads = band_search::Reads::default();
        if let Some(page) = band_search::best_of_pair(conn, pair, after, limit, reads).await? {
            return Ok(Some(Ranked { page, depth: 0 }));
        }
    }
    let first = (limit * FIRST_DEPTH_PER_ROW).max(16);
    let mut depths = vec![first; words.len()];
    let mut lists: Vec<WordList> = vec![WordList::default(); words.len()];
    let mut scores = Scores::new();
    loop {
        for (i, word) in words.iter().enumerate() {
            lists[i].read_to(conn, word, depths[i]).await?;
        }
        score_unmet(conn, words, &lists, &mut scores).await?;
        let mut page: Vec<(i64, i64)> = scores
            .iter()
            .filter_map(|(doc, score)| score.map(|s| (*doc, s)))
            .filter(|(doc, score)| after.is_none_or(|a| a.precedes(*score, *doc)))
            .collect();
        page.sort_by(|(ka, a), (kb, b)| b.cmp(a).then_with(|| ka.cmp(kb)));
        page.truncate(limit as usize);
        let depth = depths.iter().copied().max().unwrap_or(0);
        let read_to_the_end = lists.iter().any(|list| list.ended);
        if read_to_the_end || page_is_final(&page, &lists, limit) {
            return Ok(Some(Ranked { page, depth }));
        }
        // The lists read at the heaviest weight hold the ceiling up: read those deeper, as far
        // as their share of matches so far says the page's missing rows are.
        let heaviest_last = lists.iter().filter_map(WordList::last_weight).max();
        let missing = limit - page.len() as i64;
        for (i, list) in lists.iter().enumerate() {
            if list.last_weight() == heaviest_last {
                if depths[i] >= MAX_DEPTH {
                    return Ok(None);
                }
                let matches = list
                    .rows
                    .iter()
                    .filter(|(doc, _)| scores.get(doc).is_some_and(Option::is_some))
                    .count() as i64;
                depths[i] = deeper(depths[i], matches, missing);
            }
        }
    }
}

/// A word's list as read so far.
#[derive(Debug, Clone, Default)]
struct WordList {
    /// Agents' numbers and weights, heaviest first.
    rows: List,
    /// Whether the list has no more rows.
    ended: bool,
}

impl WordList {
    fn last_weight(&self) -> Option<i64> {
        self.rows.last().map(|(_, weight)| *weight)
    }

    /// Reads `word`'s list on to `depth` rows (or its end), from where it was left: the rest
    /// of the last weight read, then the lighter ones.
    async fn read_to(
        &mut self,
        conn: &mut AnyConnection,
        word: &str,
        depth: i64,
    ) -> sqlx::Result<()> {
        let wanted = depth - self.rows.len() as i64;
        if self.ended || wanted <= 0 {
            return Ok(());
        }
        let dialect = Dialect::of(conn);
        let mut query = of_word(dialect, word);
        let mut more = match self.rows.last().copied() {
            None => {
                query.push(" ORDER BY weight DESC, doc LIMIT ");
                query.push_bind(wanted);
                rows(conn, query).await?
            }
            Some((doc, weight)) => {
                query.push(" AND weight = ");
                query.push_bind(weight);
                query.push(" AND doc > ");
                query.push_bind(doc);
                query.push(" ORDER BY doc LIMIT ");
                query.push_bind(wanted);
                let mut more = rows(conn, query).await?;
                let lighter = wanted - more.len() as i64;
                if lighter > 0 {
                    let mut query = of_word(dialect, word);
                    query.push(" AND weight < ");
                    query.push_bind(weight);
                    query.push(" ORDER BY weight DESC, doc LIMIT ");
                    query.push_bind(lighter);
                    more.extend(rows(conn, query).await?);
                }
                more
            }
        };
        self.ended = (more.len() as i64) < wanted;
        self.rows.append(&mut more);
        Ok(())
    }
}

/// `SELECT doc, weight FROM agent_postings WHERE term = word`, for more conditions to follow,
/// inside [`packed`]'s one-row read (which [`rows`] closes).
fn of_word(dialect: Dialect, word: &str) -> QueryBuilder<'static, Any> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "{} SELECT doc, weight FROM {} WHERE term = ",
        packed(dialect),
        agent_postings::NAME
    ));
    query.push_bind(word.to_string());
    query
}

/// The start of a read of `(doc, weight)` rows packed into one text, `doc weight,doc weight…`,
/// heaviest first, then by number; the rows' statement follows, and [`rows`] closes it. A list
/// is read a few hundred rows at a time, and each row the driver hands over on its own cost
/// more than the database took to find it (its own allocations and conversion; measured on
/// PostgreSQL at a million agents, reading rows was a third of the API's processor time in
/// full-text searches).
fn packed(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => {
            "SELECT group_concat(doc || ' ' || weight, ',' ORDER BY weight DESC, doc) FROM ("
        }
        Dialect::Postgres => {
            "SELECT string_agg(doc || ' ' || weight, ',' ORDER BY weight DESC, doc) FROM ("
        }
    }
}

/// The rows of `query`, begun by [`packed`].
async fn rows(conn: &mut AnyConnection, mut query: QueryBuilder<'_, Any>) -> sqlx::Result<List> {
    query.push(") AS l");
    let text: Option<String> = Dialect::of(conn)
        .portable(query)
        .build_query_scalar()
        .fetch_one(conn)
        .await?;
    unpack(text.as_deref().unwrap_or(""))
}

/// The `(doc, weight)` rows of [`packed`]'s text.
fn unpack(text: &str) -> sqlx::Result<List> {
    text.split(',')
        .filter(|row| !row.is_empty())
        .map(|row| {
            let parsed = row
                .split_once(' ')
                .and_then(|(doc, weight)| Some((doc.parse().ok()?, weight.parse().ok()?)));
            parsed.ok_or_else(|| {
                sqlx::Error::Protocol(format!("a packed posting row is not two numbers: {row:?}"))
            })
        })
        .collect()
}

/// How deep to read a list next, read to `depth` with `matches` among its rows, for `missing`
/// more rows of the page: as deep as the rate of matches so far says those are, with a
/// quarter more, at least a quarter deeper and at most twice as deep.
fn deeper(depth: i64, matches: i64, missing: i64) -> i64 {
    let wanted = match (matches, missing) {
        (0, _) | (_, ..=0) => depth * 2,
        (matches, missing) => depth + (missing * depth * 5 + matches * 4 - 1) / (matches * 4),
    };
    wanted.clamp(depth + depth / 4, depth * 2).min(MAX_DEPTH)
}

/// Scores every agent of `lists` not yet in `scores`: the weights its lists' rows give, and
/// those of its other words looked up by number (`None` when it lacks one).
async fn score_unmet(
    conn: &mut AnyConnection,
    words: &[String],
    lists: &[WordList],
    scores: &mut Scores,
) -> sqlx::Result<()> {
    let mut weights: BTreeMap<i64, Vec<Option<i64>>> = BTreeMap::new();
    for (i, list) in lists.iter().enumerate() {
        for (doc, weight) in &list.rows {
            if !scores.contains_key(doc) {
                weights
                    .entry(*doc)
                    .or_insert_with(|| vec![None; words.len()])[i] = Some(*weight);
            }
        }
    }
    for (i, word) in words.iter().enumerate() {
        let unknown: Vec<i64> = weights
            .iter()
            .filter(|(_, known)| known[i].is_none())
            .map(|(doc, _)| *doc)
            .collect();
        for (doc, weight) in weights_of(conn, word, &unknown).await? {
            if let Some(known) = weights.get_mut(&doc) {
                known[i] = Some(weight);
            }
        }
    }
    for (doc, known) in weights {
        scores.insert(doc, known.into_iter().sum::<Option<i64>>());
    }
    Ok(())
}

/// Whether no agent absent from every list's rows read so far can enter `page`: it would have
/// at most each list's last weight for each word, and with all of them its number would come after
/// every list's last number.
fn page_is_final(page: &[(i64, i64)], lists: &[WordList], limit: i64) -> bool {
    if (page.len() as i64) < limit {
        return false;
    }
    let Some((last_doc, last_score)) = page.last() else {
        return false;
    };
    let ceiling: i64 = lists
        .iter()
        .map(|list| list.last_weight().unwrap_or(0))
        .sum();
    let latest_doc = lists
        .iter()
        .filter_map(|list| list.rows.last().map(|(doc, _)| *doc))
        .max();
    *last_score > ceiling || (*last_score == ceiling && latest_doc.is_some_and(|d| *last_doc <= d))
}

/// The weights `word` has for those of the agents numbered `docs` that have it.
async fn weights_of(conn: &mut AnyConnection, word: &str, docs: &[i64]) -> sqlx::Result<List> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let dialect = Dialect::of(conn);
    rows(conn, weights_among(dialect, word, docs)).await
}

/// The statement of [`weights_of`], begun by [`packed`]. The numbers are bound as one value, so
/// the statement reads the same whatever their count and is prepared once per connection (a list of that many
/// parameters would be a new statement each time, and push others out of the connection's
/// cache). On PostgreSQL each number is looked up by key in a lateral subquery: the planner
/// cannot turn that into a read of the word's whole list, whatever values it plans for (given
/// `doc = ANY(array)`, a plan made for no values in particular read every posting of the word
/// and filtered them, 433 ms for a skill word at 100,000 agents; given the numbers as a set to
/// join, it hashed the whole list too).
fn weights_among(dialect: Dialect, word: &str, docs: &[i64]) -> QueryBuilder<'static, Any> {
    match dialect {
        Dialect::Sqlite => {
            let mut query = of_word(dialect, word);
            query.push(" AND doc IN (SELECT value FROM json_each(");
            query.push_bind(serde_json::to_string(docs).expect("numbers serialise"));
            query.push("))");
            query
        }
        Dialect::Postgres => {
            let array: Vec<String> = docs.iter().map(i64::to_string).collect();
            let mut query = QueryBuilder::<Any>::new(format!(
                "{} SELECT d.doc AS doc, p.weight AS weight FROM unnest(CAST(",
                packed(dialect)
            ));
            query.push_bind(format!("{{{}}}", array.join(",")));
            query.push(format!(
                " AS BIGINT[])) AS d (doc) CROSS JOIN LATERAL \
                 (SELECT weight FROM {} WHERE term = ",
                agent_postings::NAME
            ));
            query.push_bind(word.to_string());
            query.push(" AND doc = d.doc LIMIT 1) AS p");
            query
        }
    }
}

/// Appends `SELECT doc, rank, place FROM …` over `page` (agents' numbers and ranks, `place`
/// their order in it), bound as one JSON text, so the statement reads the same whatever the
/// page's length and is prepared once per connection.
pub(crate) fn push_ranked_page(
    query: &mut QueryBuilder<'_, Any>,
    dialect: Dialect,
    page: &[(i64, f64)],
) {
    query.push(match dialect {
        Dialect::Sqlite => {
            "SELECT CAST(json_extract(value, '$[0]') AS INTEGER) AS doc,
                    CAST(json_extract(value, '$[1]') AS REAL) AS rank, key AS place
               FROM json_each("
        }
        Dialect::Postgres => {
            "SELECT CAST(e ->> 0 AS BIGINT) AS doc, CAST(e ->> 1 AS DOUBLE PRECISION) AS rank,
                    place
               FROM json_array_elements(CAST("
        }
    });
    query.push_bind(serde_json::to_string(page).expect("numbers serialise"));
    query.push(match dialect {
        Dialect::Sqlite => ")",
        Dialect::Postgres => " AS JSON)) WITH ORDINALITY AS t (e, place)",
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_words_are_folded_deduplicated_and_the_prefix_kept_apart() {
        assert_eq!(
            SearchWords::of("\"Café\" \"bot\" \"cafe\""),
            SearchWords {
                whole: vec!["cafe".into(), "bot".into()],
                prefix: None
            }
        );
        assert_eq!(
            SearchWords::of("\"weather\" \"fore\"*"),
            SearchWords {
                whole: vec!["weather".into()],
                prefix: Some("fore".into())
            }
        );
    }

    #[test]
    fn packed_rows_are_unpacked_in_order_and_a_bad_one_is_an_error() {
        assert_eq!(
            unpack("7 600,3 400,12 400").unwrap(),
            [(7, 600), (3, 400), (12, 400)]
        );
        assert_eq!(unpack("").unwrap(), []);
        let error = unpack("7 600,x 400").unwrap_err().to_string();
        assert!(error.contains("\"x 400\""), "{error}");
    }

    #[test]
    fn lists_are_read_as_deep_as_their_rate_of_matches_says() {
        // 6 matches in 320 rows, 14 rows missing: 320 + 14 × 320 / 6 × 1.25 = 1254, at most
        // twice as deep.
        assert_eq!(deeper(320, 6, 14), 640);
        assert_eq!(deeper(320, 24, 4), 400);
        assert_eq!(deeper(320, 16, 6), 470);
        // No match yet, or a full page waiting for the ceiling to fall: twice as deep.
        assert_eq!(deeper(80, 0, 17), 160);
        assert_eq!(deeper(80, 5, 0), 160);
        assert_eq!(deeper(6_000, 0, 1), MAX_DEPTH);
    }

    fn read(rows: List) -> WordList {
        WordList { rows, ended: false }
    }

    #[test]
    fn a_page_is_final_only_when_nothing_unread_can_reach_it() {
        let lists = [
            read(vec![(1, 500), (3, 400)]),
            read(vec![(2, 300), (4, 200)]),
        ];
        // An unread agent could score 400 + 200 = 600.
        assert!(page_is_final(&[(9, 601)], &lists, 1));
        assert!(!page_is_final(&[(9, 599)], &lists, 1));
        // At 600 exactly it would have to come after both 3 and 4.
        assert!(page_is_final(&[(3, 600)], &lists, 1));
        assert!(!page_is_final(&[(5, 600)], &lists, 1));
        // A short page is never final on the threshold alone.
        assert!(!page_is_final(&[(9, 900)], &lists, 2));
    }
}
