//! The two ways `list` finds a page (walking the order's index with a bound, falling back to
//! collecting the matches) give the same pages: 3,000 agents in a real store, terms common
//! enough to walk, filters selective enough to make the walk come up short, paged to the end
//! with cursors under both plans.

use super::super::cursor::Cursor;
use super::{Order, Selection, list_planned};
use crate::read::agent_walk::{Walk, Walked, plan_walk};
use crate::term_counts::TermCounts;
use agentindex_indexer::schema::{agent_profiles, agent_reputation, agent_skills, agents};
use agentindex_indexer::store::Store;
use sqlx::{Any, AnyPool, QueryBuilder};

pub(super) const AGENTS: usize = 3_000;

/// A store with [`AGENTS`] agents keyed `1:00000` on, with scores, profiles and skills.
pub(super) async fn store_with_agents() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("plans.db").display());
    let store = Store::open(&url).await.unwrap();
    let pool = AnyPool::connect(&url).await.unwrap();
    let numbers: Vec<usize> = (0..AGENTS).collect();
    for chunk in numbers.chunks(300) {
        let mut agents = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (agent_key, chain_id, source, owner, operators, active,
               registered_block, registered_at, last_event_block) ",
            agents::NAME
        ));
        // Blocks repeat (ten agents each) so the newest order has ties to break by key.
        agents.push_values(chunk, |mut row, i| {
            let block = (*i / 10) as i64;
            row.push_bind(format!("1:{i:05}"))
                .push_bind(1)
                .push_bind("factory")
                .push_bind(format!("0x{:040x}", i % 7))
                .push_bind("[]")
                .push_bind(i % 11 != 0)
                .push_bind(block)
                .push_bind(block * 12)
                .push_bind(block);
        });
        agents.build().execute(&pool).await.unwrap();
        let mut scores = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (agent_key, chain_id, as_of_block, as_of_timestamp,
               score, payment_score, payment_count, unique_payers, excluded_payments,
               feedback_count, evaluation) ",
            agent_reputation::NAME
        ));
        // 101 distinct scores: many ties.
        scores.push_values(chunk, |mut row, i| {
            row.push_bind(format!("1:{i:05}"))
                .push_bind(1)
                .push_bind(1)
                .push_bind(12)
                .push_bind(((i * 37) % 101) as f64)
                .push_bind(0.0)
                .push_bind(0)
                .push_bind(0)
                .push_bind(0)
                .push_bind(0)
                .push_bind("{}");
        });
        scores.build().execute(&pool).await.unwrap();
        let mut profiles = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (agent_key, name, x402, input_modes, output_modes,
               payments, chain_block) ",
            agent_profiles::NAME
        ));
        // x402 is rare (one in fifty): a walk over a common term comes up short with it.
        profiles.push_values(chunk, |mut row, i| {
            row.push_bind(format!("1:{i:05}"))
                .push_bind(format!("Agent {i}"))
                .push_bind(i % 50 == 0)
                .push_bind("[]")
                .push_bind("[]")
                .push_bind("[]")
                .push_bind(1);
        });
        profiles.build().execute(&pool).await.unwrap();
        let mut skills = QueryBuilder::<Any>::new(format!(
            "INSERT INTO {} (agent_key, skill_id, name, tags) ",
            agent_skills::NAME
        ));
        // Skill `common` on two agents in three; tag `half` on every other; tag `rare` on 31.
        skills.push_values(chunk, |mut row, i| {
            let skill = if i % 3 == 0 { "other" } else { "common" };
            let mut tags = Vec::new();
            if i % 2 == 0 {
                tags.push("half");
            }
            if i % 97 == 0 {
                tags.push("rare");
            }
            row.push_bind(format!("1:{i:05}"))
                .push_bind(skill)
                .push_bind(skill)
                .push_bind(serde_json::to_string(&tags).unwrap());
        });
        skills.build().execute(&pool).await.unwrap();
    }
    pool.close().await;
    (dir, store)
}

/// Every agent of `selection` in `order`, `page` at a time, following cursors.
pub(super) async fn page_through(
    pool: &AnyPool,
    selection: &Selection,
    order: Order,
    page: i64,
    may_walk: bool,
) -> Vec<String> {
    let mut keys = Vec::new();
    let mut after: Option<Cursor> = None;
    loop {
        let listed = list_planned(
            pool,
            &TermCounts::default(),
            selection,
            order,
            after.as_ref(),
            page,
            may_walk,
        )
        .await
        .unwrap();
        keys.extend(listed.iter().map(|l| l.row.agent_key.clone()));
        match listed.last() {
            Some(last) if listed.len() as i64 == page => after = Some(last.cursor(order)),
            _ => return keys,
        }
    }
}

#[tokio::test]
async fn walking_the_order_index_gives_the_pages_collecting_gives() {
    let (dir, store) = store_with_agents().await;
    // Scores changed after the terms were written, and a score gone (as a reorg's undo leaves
    // an agent): a term's list must follow both, or its walk and the collected page differ.
    let url = format!("sqlite://{}", dir.path().join("plans.db").display());
    let writer = AnyPool::connect(&url).await.unwrap();
    let reputation = agent_reputation::NAME;
    for change in [
        format!("UPDATE {reputation} SET score = score + 0.5 WHERE agent_key LIKE '%3'"),
        format!("DELETE FROM {reputation} WHERE agent_key IN ('1:00004', '1:00100')"),
    ] {
        sqlx::query(&change).execute(&writer).await.unwrap();
    }
    writer.close().await;
    let pool = store.reader();
    let common = Selection {
        skill: Some("Common".into()),
        ..Selection::default()
    };
    assert!(
        plan_walk(pool, &TermCounts::default(), &common, Order::Newest, 21)
            .await
            .unwrap()
            .is_some(),
        "a skill two agents in three have is walked"
    );
    for selection in [
        common.clone(),
        Selection {
            tags: vec!["rare".into()],
            ..Selection::default()
        },
    ] {
        let walk = plan_walk(
            pool,
            &TermCounts::default(),
            &selection,
            Order::Reputation,
            21,
        )
        .await
        .unwrap();
        assert!(
            matches!(
                walk,
                Some(Walk {
                    walked: Walked::Term(_),
                    ..
                })
            ),
            "{selection:?} in reputation order walks its term's list: {walk:?}"
        );
    }
    let selections = [
        common.clone(),
        Selection {
            x402: Some(true),
            ..common.clone()
        },
        Selection {
            min_reputation: Some(60.0),
            ..common.clone()
        },
        Selection {
            tags: vec!["half".into()],
            active: Some(true),
            ..common.clone()
        },
        Selection {
            tags: vec!["rare".into()],
            ..Selection::default()
        },
        Selection {
            tags: vec!["half".into()],
            x402: Some(false),
            min_reputation: Some(99.0),
            ..Selection::default()
        },
    ];
    for selection in &selections {
        for order in [Order::Reputation, Order::Newest] {
            for page in [7, 100] {
                let collected = page_through(pool, selection, order, page, false).await;
                let planned = page_through(pool, selection, order, page, true).await;
                assert!(!collected.is_empty(), "{selection:?} matches agents");
                assert_eq!(
                    planned, collected,
                    "{selection:?} in {order:?} order, {page} at a time"
                );
            }
        }
    }
}

#[tokio::test]
async fn liveness_filters_read_on_both_plans() {
    let (_dir, store) = store_with_agents().await;
    let pool = store.reader();
    for selection in [
        Selection {
            reachable: Some(true),
            ..Selection::default()
        },
        Selection {
            reachable: Some(false),
            min_uptime: Some(0.5),
            ..Selection::default()
        },
        Selection {
            x402_live: Some(false),
            mcp_tool: Some("translate".into()),
            ..Selection::default()
        },
        Selection {
            x402_live: Some(true),
            ..Selection::default()
        },
    ] {
        for order in [Order::Newest, Order::Reputation] {
            for walk in [true, false] {
                list_planned(
                    pool,
                    &TermCounts::default(),
                    &selection,
                    order,
                    None,
                    20,
                    walk,
                )
                .await
                .unwrap();
            }
        }
        super::count(pool, &selection).await.unwrap();
    }
}

/// A term row whose copy of the score lags its agent's (as two writers committing at once can
/// leave one) is left out of the term's walk; the pages around it keep their order and their
/// cursors go on.
#[tokio::test]
async fn a_term_row_with_a_lagging_score_is_left_out_of_the_walk() {
    let (dir, store) = store_with_agents().await;
    let url = format!("sqlite://{}", dir.path().join("plans.db").display());
    let writer = AnyPool::connect(&url).await.unwrap();
    // Set behind the triggers' back: far above any score, it would lead every page.
    sqlx::query(&format!(
        "UPDATE {} SET score = 1000 WHERE agent_key = '1:00010'",
        agentindex_indexer::schema::agent_terms::NAME
    ))
    .execute(&writer)
    .await
    .unwrap();
    writer.close().await;
    let pool = store.reader();
    let common = Selection {
        skill: Some("common".into()),
        ..Selection::default()
    };
    for page in [7, 100] {
        let collected = page_through(pool, &common, Order::Reputation, page, false).await;
        let walked = page_through(pool, &common, Order::Reputation, page, true).await;
        let expected: Vec<String> = collected
            .into_iter()
            .filter(|key| key != "1:00010")
            .collect();
        assert_eq!(walked, expected, "{page} at a time");
    }
}
