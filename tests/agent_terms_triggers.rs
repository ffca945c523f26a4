//! `agent_terms`, the index of skill and tag terms a tag or skill filter reads, is kept by the
//! migrations' triggers from two tables: a skill's id and tags (`agent_skills`) and the tags an
//! agent declares itself (`agent_tags`). Checked on SQLite and PostgreSQL alike.

use crate::support::postgres;
use agentindex_indexer::store::Store;
use sqlx::AnyPool;

/// `agent_terms` holds a tag while a skill of the agent or the agent's own tags (`agent_tags`)
/// hold it, whichever is removed first, on both databases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_term_stays_while_a_skill_or_the_agents_own_tags_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let urls = [
        format!("sqlite://{}", dir.path().join("terms.db").display()),
        postgres::server().fresh_database(),
    ];
    for url in urls {
        Store::open(&url).await.unwrap().close().await;
        let pool = AnyPool::connect(&url).await.unwrap();
        let run = |sql: &'static str| {
            let pool = pool.clone();
            async move {
                sqlx::query(sql).execute(&pool).await.unwrap();
            }
        };
        let terms = || async {
            let rows: Vec<(String, String)> = sqlx::query_as(
                "SELECT kind, term FROM agent_terms WHERE agent_key = 'a' ORDER BY kind, term",
            )
            .fetch_all(&pool)
            .await
            .unwrap();
            rows
        };
        let pair = |kind: &str, term: &str| (kind.to_string(), term.to_string());
        run(
            "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) \
             VALUES ('a', 'Lookup', 'Lookup', NULL, '[\"cards\", \"search\"]')",
        )
        .await;
        run("INSERT INTO agent_tags (agent_key, tag) VALUES ('a', 'cards')").await;
        run("INSERT INTO agent_tags (agent_key, tag) VALUES ('a', 'text')").await;
        assert_eq!(
            terms().await,
            [
                pair("skill", "lookup"),
                pair("tag", "cards"),
                pair("tag", "search"),
                pair("tag", "text"),
            ],
            "{url}"
        );
        run("DELETE FROM agent_skills WHERE agent_key = 'a'").await;
        assert_eq!(
            terms().await,
            [pair("tag", "cards"), pair("tag", "text")],
            "the agent's own tags keep theirs: {url}"
        );
        run(
            "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) \
             VALUES ('a', 'Lookup', 'Lookup', NULL, '[\"cards\"]')",
        )
        .await;
        run("DELETE FROM agent_tags WHERE agent_key = 'a'").await;
        assert_eq!(
            terms().await,
            [pair("skill", "lookup"), pair("tag", "cards")],
            "the skill keeps its tag: {url}"
        );
        pool.close().await;
    }
}
