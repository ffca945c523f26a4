//! Writers of agents' scores and profiles on one PostgreSQL database take turns. Each process's
//! documents worker rewrites the profiles (and so the skill and tag lists, which carry a copy of
//! each agent's score) of every agent, while each chain's writer rescores its own; run side by
//! side under READ COMMITTED, a profile written with the old score and a rescore that cannot
//! see the profile's new rows would leave the lists with a score the agent no longer has. Here
//! another process's profile write, in its turn (`SCORES_TURN_LOCK`), is held open while the
//! store rescores the agent: the rescore waits for it, and the list's copy ends up equal to the
//! agent's score. Synthetic paid agents from the benchmarks' `examples/support/agents.rs`.

use crate::support::postgres;
use crate::trust_rollout::agents;
use agentindex_indexer::store::{SCORES_TURN_LOCK, Store};
use sqlx::{Acquire, AnyPool};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Whether a connection of the database other than `pid` waits for a lock.
async fn someone_waits(pool: &AnyPool, pid: i32) -> bool {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                         WHERE datname = current_database() AND pid <> $1
                           AND wait_event_type = 'Lock')",
    )
    .bind(pid)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rescore_waits_for_another_processs_profile_write_and_its_list_keeps_the_score() {
    let url = postgres::server().fresh_database();
    let store = Store::open(&url).await.unwrap();
    let pool = AnyPool::connect(&url).await.unwrap();
    let keys = agents::fill_paid(&pool, 20, false, 2).await.unwrap();
    let chain = Arc::new(agents::chain_context(agents::rules()));
    let writer = store.writer(2);
    writer.rescore(chain.clone(), keys.clone()).await.unwrap();
    let agent = keys[0].clone();
    let scored: f64 = sqlx::query_scalar("SELECT score FROM agent_reputation WHERE agent_key = $1")
        .bind(&agent)
        .fetch_one(&pool)
        .await
        .unwrap();
    // A score the facts do not give, so the rescore below writes one.
    sqlx::query("UPDATE agent_reputation SET score = -1 WHERE agent_key = $1")
        .bind(&agent)
        .execute(&pool)
        .await
        .unwrap();

    // Another process gives the agent a tag, in its turn, and has not committed yet: the tag's
    // term row copied the score the agent has now, -1.
    let mut other = pool.acquire().await.unwrap();
    let mut profile = other.begin().await.unwrap();
    let other_pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *profile)
        .await
        .unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(SCORES_TURN_LOCK.0)
        .bind(SCORES_TURN_LOCK.1)
        .execute(&mut *profile)
        .await
        .unwrap();
    sqlx::query("INSERT INTO agent_tags (agent_key, tag) VALUES ($1, 'picked')")
        .bind(&agent)
        .execute(&mut *profile)
        .await
        .unwrap();

    // The store rescores the agent meanwhile: it either waits (its turn) or, without turns,
    // writes the score at once, missing the uncommitted term row.
    let rescoring = tokio::spawn({
        let writer = writer.clone();
        let agent = agent.clone();
        async move { writer.rescore(chain, vec![agent]).await }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while !rescoring.is_finished() && !someone_waits(&pool, other_pid).await {
        assert!(
            Instant::now() < deadline,
            "the rescore neither ran nor waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    profile.commit().await.unwrap();
    // Back to the pool, which waits for its connections when it closes.
    drop(other);
    rescoring.await.unwrap().unwrap();

    let (listed, score): (Option<f64>, f64) = sqlx::query_as(
        "SELECT t.score, r.score FROM agent_terms t JOIN agent_reputation r
             ON r.agent_key = t.agent_key
          WHERE t.agent_key = $1 AND t.term = 'picked'",
    )
    .bind(&agent)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(score, scored, "the rescore wrote the facts' score");
    assert_eq!(
        listed,
        Some(score),
        "the tag's list carries the agent's score"
    );
    pool.close().await;
}
