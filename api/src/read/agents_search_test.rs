//! A plain search's page read from its words' heaviest postings (`ranked_search`) is the page
//! ranking every match gives: the plans test's 3,000 agents in a real store, with search text
//! whose words weigh in few steps (many ties, broken by agents' search numbers given in an order
//! unlike their keys'), searched for common, rare and absent words, paged to the end with
//! cursors both ways, and both against the relevance computed here from the agents' own text.

use super::plans_test::AGENTS;
use super::{Order, Selection};
use crate::read::band_search;
use crate::read::ranked_search::{self, After, SearchWords};
use agentindex_indexer::documents::search_postings::{SearchText, postings};
use agentindex_indexer::schema::{agent_postings, agent_search, search_agents};
use agentindex_indexer::store::Store;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::BTreeMap;

const WORDS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "omega", "sigma"];

/// Agent `i`'s search text: words drawn from `WORDS` by its number, in every field, some twice.
fn text_of(i: usize) -> [String; 4] {
    let word = |n: usize| WORDS[n % WORDS.len()];
    let rare = if i.is_multiple_of(151) { " rare" } else { "" };
    [
        format!("Agent {}{rare}", word(i / 7)),
        format!("does {} and {}", word(i), word(i / 3)),
        format!("{} {}", word(i / 5), word(i * 7 / 11)),
        format!("{} {} tag{}", word(i / 2), word(i / 2), i % 9),
    ]
}

/// Agent `i`'s number in `search_agents`: scrambled, so ties are not broken in key order.
fn doc_of(i: usize) -> i64 {
    ((i * 7_919) % AGENTS) as i64 + 1
}

/// Each agent's words and weights, by agent key.
type Weights = BTreeMap<String, BTreeMap<String, i64>>;

/// The agents of the plans' store, with search rows, numbers and postings.
async fn store_with_agents() -> (tempfile::TempDir, Store, Weights) {
    let (dir, store) = super::plans_test::store_with_agents().await;
    let url = format!("sqlite://{}", dir.path().join("plans.db").display());
    let pool = AnyPool::connect(&url).await.unwrap();
    let mut weights = BTreeMap::new();
    let numbers: Vec<usize> = (0..AGENTS).collect();
    for chunk in numbers.chunks(200) {
        let mut search = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (agent_key, name, description, skills, tags) ",
            agent_search::NAME
        ));
        search.push_values(chunk, |mut row, i| {
            let [name, description, skills, tags] = text_of(*i);
            row.push_bind(format!("1:{i:05}"))
                .push_bind(name)
                .push_bind(description)
                .push_bind(skills)
                .push_bind(tags);
        });
        search.build().execute(&pool).await.unwrap();
        let mut numbers = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (doc, agent_key) ",
            search_agents::NAME
        ));
        numbers.push_values(chunk, |mut row, i| {
            row.push_bind(doc_of(*i)).push_bind(format!("1:{i:05}"));
        });
        numbers.build().execute(&pool).await.unwrap();
        for i in chunk {
            let [name, description, skills, tags] = text_of(*i);
            let agent: BTreeMap<String, i64> = postings(SearchText {
                name: &name,
                description: &description,
                skills: &skills,
                tags: &tags,
            })
            .into_iter()
            .collect();
            let mut insert = QueryBuilder::<Any>::new(format!(
                "INSERT INTO {} (doc, term, weight) ",
                agent_postings::NAME
            ));
            insert.push_values(&agent, |mut row, (term, weight)| {
                row.push_bind(doc_of(*i))
                    .push_bind(term.clone())
                    .push_bind(*weight);
            });
            insert.build().execute(&pool).await.unwrap();
            weights.insert(format!("1:{i:05}"), agent);
        }
    }
    pool.close().await;
    (dir, store, weights)
}

/// `text` as the GraphQL layer hands a search to the reads: quoted words.
fn fts_query(text: &str) -> String {
    let words: Vec<String> = text.split(' ').map(|w| format!("\"{w}\"")).collect();
    words.join(" ")
}

/// Every agent of a search for `text`, `page` at a time, following cursors.
async fn page_through(pool: &AnyPool, text: &str, page: i64, early: bool) -> Vec<String> {
    let selection = Selection {
        search: Some(fts_query(text)),
        ..Selection::default()
    };
    super::plans_test::page_through(pool, &selection, Order::Relevance, page, early).await
}

/// The agents having every word of `text`, by relevance computed from their own text, ties
/// by search number.
fn expected(weights: &Weights, text: &str) -> Vec<String> {
    let words = SearchWords::of(&fts_query(text)).whole;
    let mut matches: Vec<(i64, i64, &String)> = weights
        .iter()
        .filter_map(|(key, agent)| {
            let found: Option<Vec<i64>> = words.iter().map(|w| agent.get(w).copied()).collect();
            let i: usize = key[2..].parse().unwrap();
            found.map(|w| (-w.iter().sum::<i64>(), doc_of(i), key))
        })
        .collect();
    matches.sort();
    matches.into_iter().map(|(.., key)| key.clone()).collect()
}

#[tokio::test]
async fn the_heaviest_postings_give_the_pages_ranking_every_match_gives() {
    let (_dir, store, weights) = store_with_agents().await;
    let pool = store.reader();
    for text in [
        "alpha",
        "gamma delta",
        "Beta beta omega",
        "sigma alpha gamma",
        "rare",
        "rare omega",
        "tag3 delta",
        "agent",
        "nobody",
        "alpha nobody",
    ] {
        let expected = expected(&weights, text);
        for page in [1, 7, 50] {
            if page == 1 && expected.len() > 400 {
                continue;
            }
            let early = page_through(pool, text, page, true).await;
            assert_eq!(
                early, expected,
                "{text:?}, {page} a page, from the postings"
            );
            let every = page_through(pool, text, page, false).await;
            assert_eq!(
                every, expected,
                "{text:?}, {page} a page, every match ranked"
            );
        }
    }
}

#[tokio::test]
async fn a_first_page_of_a_common_word_is_settled_without_reading_its_whole_list() {
    let (_dir, store, weights) = store_with_agents().await;
    let pool = store.reader();
    let holders = weights.values().filter(|a| a.contains_key("agent")).count() as i64;
    let ranked = ranked_search::best(pool, &["agent".into()], None, 10)
        .await
        .unwrap()
        .expect("settled");
    assert_eq!(ranked.page.len(), 10);
    assert!(
        ranked.depth < holders,
        "read {} of {holders} postings",
        ranked.depth
    );
    let two = ranked_search::best(pool, &["alpha".into(), "gamma".into()], None, 10)
        .await
        .unwrap()
        .expect("settled");
    let alpha = weights.values().filter(|a| a.contains_key("alpha")).count() as i64;
    assert!(two.depth < alpha, "read {} of {alpha}", two.depth);
    let docs: Vec<i64> = expected(&weights, "alpha gamma")[..10]
        .iter()
        .map(|key| doc_of(key[2..].parse().unwrap()))
        .collect();
    assert_eq!(two.page.iter().map(|(d, _)| *d).collect::<Vec<_>>(), docs);
}

/// Every agent having both words of `pair`, ranked band by band (`band_search`) a page at a
/// time, each page after the last one's final row, as `(key, relevance)`.
async fn band_pages(
    pool: &AnyPool,
    pair: [&str; 2],
    page: i64,
    reads: band_search::Reads,
) -> Option<Vec<(i64, i64)>> {
    let mut conn = pool.acquire().await.unwrap();
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let rows = band_search::best_of_pair(&mut conn, pair, after, page, reads)
            .await
            .unwrap()?;
        assert!(rows.len() as i64 <= page);
        all.extend(rows.iter().copied());
        match rows.last() {
            Some((doc, score)) if rows.len() as i64 == page => {
                after = Some(After {
                    score: *score,
                    doc: *doc,
                })
            }
            _ => return Some(all),
        }
    }
}

#[tokio::test]
async fn ranking_band_by_band_gives_the_pages_ranking_every_match_gives() {
    let (_dir, store, weights) = store_with_agents().await;
    let pool = store.reader();
    // Steps of 16 entries make every pair's merge go on step after step, and bands end inside
    // a step while their partner goes on (the short band's agents looked up).
    let small = band_search::Reads {
        step: 16,
        budget: i64::MAX,
    };
    for pair in [
        ["gamma", "delta"],
        ["alpha", "rare"],
        ["rare", "omega"],
        ["tag3", "delta"],
        ["agent", "sigma"],
        ["alpha", "nobody"],
    ] {
        let want: Vec<(i64, i64)> = expected(&weights, &pair.join(" "))
            .iter()
            .map(|key| {
                let agent = &weights[key];
                (
                    doc_of(key[2..].parse().unwrap()),
                    pair.iter().map(|w| agent[*w]).sum(),
                )
            })
            .collect();
        for (page, reads) in [(7, small), (50, small), (20, band_search::Reads::default())] {
            let got = band_pages(pool, pair, page, reads)
                .await
                .unwrap_or_else(|| panic!("{pair:?}, {page} a page, {reads:?}: given back"));
            assert_eq!(got, want, "{pair:?}, {page} a page, {reads:?}");
        }
    }
    // A budget of a few statements gives the search back once it is spent.
    let tight = band_search::Reads {
        step: 16,
        budget: 6 * 4_096,
    };
    assert_eq!(band_pages(pool, ["gamma", "delta"], 50, tight).await, None);
}
