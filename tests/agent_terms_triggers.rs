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

/// Each term row carries its agent's reputation score (the per-term reputation order reads
/// it): copied when the term comes after the score, when the score comes after the term, when
/// the score changes (one agent or many in one statement), and cleared when the score row goes
/// (a reorg's undo), on both databases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_term_row_carries_its_agents_score_whichever_is_written_first() {
    let dir = tempfile::tempdir().unwrap();
    let urls = [
        format!("sqlite://{}", dir.path().join("scores.db").display()),
        postgres::server().fresh_database(),
    ];
    for url in urls {
        Store::open(&url).await.unwrap().close().await;
        let pool = AnyPool::connect(&url).await.unwrap();
        let run = |sql: String| {
            let pool = pool.clone();
            async move {
                sqlx::query(&sql).execute(&pool).await.unwrap();
            }
        };
        let skill = |agent: &str| {
            format!(
                "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) \
                 VALUES ('{agent}', 'Lookup', 'Lookup', NULL, '[\"cards\"]')"
            )
        };
        // One statement scoring `agents`, as the rescore writes many agents at once (on
        // PostgreSQL its rows inserted and its rows updated fire a trigger each).
        let scored = |agents: &[(&str, f64)]| {
            let rows: Vec<String> = agents
                .iter()
                .map(|(agent, score)| {
                    format!("('{agent}', 1, 1, 12, {score}, 0, 0, 0, 0, 0, '{{}}')")
                })
                .collect();
            format!(
                "INSERT INTO agent_reputation (agent_key, chain_id, as_of_block, \
                   as_of_timestamp, score, payment_score, payment_count, unique_payers, \
                   excluded_payments, feedback_count, evaluation) \
                 VALUES {} ON CONFLICT (agent_key) DO UPDATE SET score = excluded.score",
                rows.join(", ")
            )
        };
        let score = |agent: &str, score: f64| scored(&[(agent, score)]);
        let scores = || async {
            let rows: Vec<(String, String, Option<f64>)> = sqlx::query_as(
                "SELECT agent_key, term, score FROM agent_terms ORDER BY agent_key, kind, term",
            )
            .fetch_all(&pool)
            .await
            .unwrap();
            rows
        };
        let row = |agent: &str, term: &str, score: Option<f64>| {
            (agent.to_string(), term.to_string(), score)
        };
        // Every term row once `a` holds two terms and `b` three, each with its agent's score.
        let both_scored = |a: f64, b: f64| {
            [
                row("a", "lookup", Some(a)),
                row("a", "cards", Some(a)),
                row("b", "lookup", Some(b)),
                row("b", "cards", Some(b)),
                row("b", "text", Some(b)),
            ]
        };
        // `a` is scored before its terms exist, `b` after.
        run(score("a", 12.5)).await;
        run(skill("a")).await;
        run(skill("b")).await;
        assert_eq!(
            scores().await,
            [
                row("a", "lookup", Some(12.5)),
                row("a", "cards", Some(12.5)),
                row("b", "lookup", None),
                row("b", "cards", None),
            ],
            "{url}"
        );
        run(score("b", 40.25)).await;
        run(score("a", 3.0)).await;
        run("INSERT INTO agent_tags (agent_key, tag) VALUES ('b', 'text')".into()).await;
        assert_eq!(scores().await, both_scored(3.0, 40.25), "{url}");
        run("DELETE FROM agent_reputation WHERE agent_key = 'b'".into()).await;
        let left = scores().await;
        assert_eq!(
            left[2..],
            [
                row("b", "lookup", None),
                row("b", "cards", None),
                row("b", "text", None),
            ],
            "{url}"
        );
        assert_eq!(left[0].2, Some(3.0), "{url}");
        // One statement rescoring `a` and scoring `b` anew, then one removing both.
        run(scored(&[("a", 9.0), ("b", 7.5), ("c", 1.0)])).await;
        assert_eq!(scores().await, both_scored(9.0, 7.5), "{url}");
        run("DELETE FROM agent_reputation WHERE agent_key IN ('a', 'b')".into()).await;
        assert!(
            scores().await.iter().all(|(_, _, score)| score.is_none()),
            "{url}"
        );
        pool.close().await;
    }
}
