//! The statements of a ranking band by band (`band_search`): a word's distinct weights, merge
//! steps of band pairs (several pairs in one statement), and a short band's agents looked up
//! in the other word's list. Portable SQL; agents come back packed into one text a pair.

use agentindex_indexer::schema::agent_postings;
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyConnection, QueryBuilder};

/// A band pair: a weight of each word.
pub(super) type Pair = (i64, i64);

/// One merge step of a band pair: the next `step` entries of each band numbered above `from`,
/// merged for up to `want` agents.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub(super) pair: Pair,
    pub(super) from: i64,
    pub(super) step: i64,
    pub(super) want: i64,
}

/// What one merge step found: the agents in both bands, in number order, and, when fewer
/// than wanted, each band's step counted: its entries (fewer than the step when the band ends
/// within it) and the last one's number (`from` when none).
#[derive(Debug)]
pub(super) struct Stepped {
    pub(super) docs: Vec<i64>,
    pub(super) bands: Option<[(i64, i64); 2]>,
}

impl Stepped {
    /// Entries the step read at most: both bands' merged up to the last match (at most the
    /// step each) when it found what it was asked for, else both bands' steps twice (merged,
    /// then counted).
    pub(super) fn entries_read(&self, step: i64) -> i64 {
        match self.bands {
            None => 2 * step,
            Some([(a, _), (b, _)]) => 2 * (a + b),
        }
    }
}

/// `word`'s distinct weights, heaviest first, at most `most` of them and one more to tell that
/// there are more, each found by one descent of `agent_postings_impact` (a loose index scan).
pub(super) async fn weights(
    conn: &mut AnyConnection,
    word: &str,
    most: i64,
) -> sqlx::Result<Vec<i64>> {
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
    query.push_bind(most);
    query.push(") SELECT weight FROM w WHERE weight IS NOT NULL ORDER BY weight DESC");
    Dialect::of(conn)
        .portable(query)
        .build_query_scalar()
        .fetch_all(&mut *conn)
        .await
}

/// `SELECT doc FROM agent_postings WHERE term = … AND weight = … AND doc > from ORDER BY doc
/// LIMIT step` for `word` at `weight`, to be closed with `)`.
fn push_band(
    query: &mut QueryBuilder<'static, Any>,
    word: &str,
    weight: i64,
    from: i64,
    step: i64,
) {
    query.push(format!(
        "(SELECT doc FROM {} WHERE term = ",
        agent_postings::NAME
    ));
    query.push_bind(word.to_string());
    query.push(" AND weight = ");
    query.push_bind(weight);
    query.push(" AND doc > ");
    query.push_bind(from);
    query.push(" ORDER BY doc LIMIT ");
    query.push_bind(step);
}

/// The weight of a pair for word `side`.
fn weight_of(pair: Pair, side: usize) -> i64 {
    if side == 0 { pair.0 } else { pair.1 }
}

/// One merge step of each of `steps` (not empty), in one statement: a part per step, each
/// merging its pair's capped bands and counting them (subqueries in a `CASE`, run only when
/// its merge came up short). The parts are padded to a power of two by repeating the last, so
/// the statement's text is one of a few whatever the number of steps (each text is prepared
/// once per connection).
pub(super) async fn merge_steps(
    conn: &mut AnyConnection,
    words: [&str; 2],
    steps: &[Step],
) -> sqlx::Result<Vec<Stepped>> {
    let dialect = Dialect::of(conn);
    let parts = steps.len().next_power_of_two();
    let mut query = QueryBuilder::<Any>::new("");
    for part in 0..parts {
        let step = steps[part.min(steps.len() - 1)];
        if part > 0 {
            query.push(" UNION ALL ");
        }
        query.push("SELECT * FROM (WITH m AS (SELECT a.doc AS doc FROM ");
        push_band(&mut query, words[0], step.pair.0, step.from, step.step);
        query.push(") a JOIN ");
        push_band(&mut query, words[1], step.pair.1, step.from, step.step);
        query.push(") b ON b.doc = a.doc ORDER BY a.doc LIMIT ");
        query.push_bind(step.want);
        query.push(format!(
            ") SELECT {part} AS part, (SELECT {}(CAST(doc AS TEXT), ',' ORDER BY doc) FROM m) \
             AS found",
            aggregate(dialect)
        ));
        for (side, word) in words.iter().enumerate() {
            query.push(", CASE WHEN (SELECT count(*) FROM m) < ");
            query.push_bind(step.want);
            query.push(
                " THEN (SELECT CAST(count(*) AS TEXT) || ' ' || \
                 COALESCE(CAST(max(doc) AS TEXT), '') FROM ",
            );
            push_band(
                &mut query,
                word,
                weight_of(step.pair, side),
                step.from,
                step.step,
            );
            query.push(format!(") s) END AS band_{side}"));
        }
        query.push(format!(") AS p{part}"));
    }
    type Row = (i64, Option<String>, Option<String>, Option<String>);
    let rows: Vec<Row> = dialect
        .portable(query)
        .build_query_as()
        .fetch_all(&mut *conn)
        .await?;
    let mut stepped: Vec<Option<Stepped>> = steps.iter().map(|_| None).collect();
    for (part, found, band_a, band_b) in rows {
        let Some(slot) = usize::try_from(part).ok().and_then(|p| stepped.get_mut(p)) else {
            continue; // a repeat of the last step, padding the statement
        };
        let from = steps[part as usize].from;
        let bands = match (band_a, band_b) {
            (Some(a), Some(b)) => Some([band_read(&a, from)?, band_read(&b, from)?]),
            _ => None,
        };
        *slot = Some(Stepped {
            docs: unpack_docs(found.as_deref().unwrap_or(""))?,
            bands,
        });
    }
    stepped
        .into_iter()
        .map(|s| s.ok_or_else(|| sqlx::Error::Protocol("a merge step's row is missing".into())))
        .collect()
}

/// The agents of word `short`'s band of `pair` numbered above `from` (at most `step`) that
/// have the other word at its weight, each looked up by number. The look-up is a subquery
/// per agent, which PostgreSQL runs as one descent each: as a join or `EXISTS` it may read the
/// other word's band whole instead.
pub(super) async fn looked_up(
    conn: &mut AnyConnection,
    words: [&str; 2],
    pair: Pair,
    short: usize,
    from: i64,
    step: i64,
) -> sqlx::Result<Vec<i64>> {
    let dialect = Dialect::of(conn);
    let other = 1 - short;
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT {}(CAST(CASE WHEN (SELECT q.weight FROM {} q WHERE q.term = ",
        aggregate(dialect),
        agent_postings::NAME
    ));
    query.push_bind(words[other].to_string());
    query.push(" AND q.doc = d.doc) = ");
    query.push_bind(weight_of(pair, other));
    query.push(" THEN d.doc END AS TEXT), ',' ORDER BY d.doc) FROM ");
    push_band(&mut query, words[short], weight_of(pair, short), from, step);
    query.push(") d");
    let text: Option<String> = dialect
        .portable(query)
        .build_query_scalar()
        .fetch_one(&mut *conn)
        .await?;
    unpack_docs(text.as_deref().unwrap_or(""))
}

/// A band's step as [`merge_steps`] counted it, `count last` (`last` empty for none): the
/// entries, and the last one's number (`from` when none).
fn band_read(text: &str, from: i64) -> sqlx::Result<(i64, i64)> {
    let bad = || sqlx::Error::Protocol(format!("a band's count is not `count last`: {text:?}"));
    let (count, last) = text.split_once(' ').ok_or_else(bad)?;
    let count = count.parse().map_err(|_| bad())?;
    let last = match last {
        "" => from,
        last => last.parse().map_err(|_| bad())?,
    };
    Ok((count, last))
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
    fn a_bands_count_is_read_with_its_last_number_or_the_start_for_none() {
        assert_eq!(band_read("1024 5077", 3).unwrap(), (1024, 5077));
        assert_eq!(band_read("0 ", 3).unwrap(), (0, 3));
        assert!(band_read("12", 3).is_err());
        assert!(band_read("x 4", 3).is_err());
    }

    #[test]
    fn packed_numbers_are_read_back_and_a_bad_one_is_an_error() {
        assert_eq!(unpack_docs("3,17,40").unwrap(), [3, 17, 40]);
        assert_eq!(unpack_docs("").unwrap(), Vec::<i64>::new());
        assert!(unpack_docs("3,x").is_err());
    }
}
