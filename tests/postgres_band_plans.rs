//! A full-text search of two words on PostgreSQL is ranked band by band (`api/src/read/
//! band_search.rs`): under plans made for no values (`force_generic_plan`) its pages are the
//! ranking worked out here, and a page reads a small part of the words' postings, counted by
//! PostgreSQL's own statistics of index reads. A short band against a long one has its agents
//! looked up by number. Runs on the test PostgreSQL server whichever backend the rest of the
//! suite uses.

use crate::postgres_plans::{
    agents_numbered, run_planned_for_no_values, served_without_limits, table_reads,
};
use crate::support;
use crate::support::postgres;

use agentindex_indexer::store::Store;
use serde_json::json;

/// Agents, each holding the common word.
const AGENTS: i64 = 20_000;
/// Rows a page asks for.
const FIRST: i64 = 5;

/// Agent `n`'s weight for each word, `None` without it: the common word in three bands, the
/// tag in one, the rare word in one of twenty agents.
fn weight(word: &str, n: i64) -> Option<i64> {
    match word {
        "common" if n % 7 == 0 => Some(600),
        "common" if n % 3 == 0 => Some(200),
        "common" => Some(400),
        "tagged" => (n % 5 == 0).then_some(400),
        "rare" => (n % 997 == 0).then_some(1_000),
        _ => None,
    }
}

/// Every agent with both `words` by the sum of its weights, ties to the lower number.
fn ranked(words: [&str; 2]) -> Vec<String> {
    let mut both: Vec<(i64, i64)> = (1..=AGENTS)
        .filter_map(|n| Some((weight(words[0], n)? + weight(words[1], n)?, n)))
        .collect();
    both.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    both.iter().map(|(_, n)| format!("1:{n:06}")).collect()
}

/// `INSERT`s of `word`'s postings: one `SELECT` per band, numbers from the series.
fn postings(word: &str, bands: &[(i64, &str)]) -> Vec<String> {
    bands
        .iter()
        .map(|(weight, holds)| {
            format!(
                "INSERT INTO agent_postings (doc, term, weight)
                 SELECT n, '{word}', {weight} FROM generate_series(1, {AGENTS}) AS n WHERE {holds}"
            )
        })
        .collect()
}

/// Up to `pages` pages of a search for `text`, following the cursors.
async fn pages_of(endpoint: &str, text: &str, pages: usize) -> Vec<String> {
    const SEARCH: &str = "query($search: String, $first: Int, $after: String) {
        agents(search: $search, first: $first, after: $after) {
            edges { node { id } } pageInfo { hasNextPage endCursor } } }";
    let variables = json!({ "search": text, "first": FIRST });
    support::api::agent_ids_paged(endpoint, SEARCH, variables, pages, text).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_of_two_words_reads_a_few_entries_of_each_band_under_plans_for_no_values() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    let mut statements = vec![
        agents_numbered(AGENTS),
        format!(
            "INSERT INTO agent_search (agent_key, name, description, skills, tags)
             SELECT '1:' || lpad(n::text, 6, '0'), 'agent', '', 'common',
                    concat_ws(' ', CASE WHEN n % 5 = 0 THEN 'tagged' END,
                                   CASE WHEN n % 997 = 0 THEN 'rare' END)
               FROM generate_series(1, {AGENTS}) AS n"
        ),
        format!(
            "INSERT INTO search_agents (doc, agent_key)
             SELECT n, '1:' || lpad(n::text, 6, '0') FROM generate_series(1, {AGENTS}) AS n"
        ),
    ];
    statements.extend(postings(
        "common",
        &[
            (600, "n % 7 = 0"),
            (200, "n % 7 <> 0 AND n % 3 = 0"),
            (400, "n % 7 <> 0 AND n % 3 <> 0"),
        ],
    ));
    statements.extend(postings("tagged", &[(400, "n % 5 = 0")]));
    statements.extend(postings("rare", &[(1_000, "n % 997 = 0")]));
    run_planned_for_no_values(&url, &statements).await;
    let served = served_without_limits(store, &url).await;
    let endpoint = format!("{}/graphql", served.base);

    // Three pages of a search whose best pair of bands holds hundreds of agents.
    let pages = pages_of(&endpoint, "common tagged", 3).await;
    assert_eq!(pages, ranked(["common", "tagged"])[..3 * FIRST as usize]);
    // Every agent of the rare word, its band looked up in the common word's list.
    let rare = pages_of(&endpoint, "rare common", 10).await;
    assert_eq!(rare, ranked(["rare", "common"]));
    served.stop().await;

    let (rows, scans) = table_reads(&url, "agent_postings").await;
    assert!(scans > 0, "the statistics counted no read of the postings");
    // Seven pages were asked for; each read under half the postings the common word's list
    // holds (a merge reads up to a step of 4,096 entries of each band, and one that comes up
    // short counts both steps after it; the rare word's pages pass three of the common word's
    // bands each). Merging the words' lists whole, a page at a time, is the failure.
    assert!(
        rows < 7 * AGENTS / 2,
        "seven pages read {rows} postings in {scans} index scans"
    );
}
