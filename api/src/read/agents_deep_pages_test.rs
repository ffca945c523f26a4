//! Pages after a cursor in reputation and newest order: every agent once, by score (or
//! registration block) and then by id, both descending, on both plans; and on SQLite each such
//! page is one range of the order's index starting at the cursor, so a page deep in the list
//! reads about what the first one does (a page 990,000 agents deep read every entry above it
//! while ties were broken by id ascending under a descending score: 6.4 s).

use super::super::cursor::Cursor;
use super::plans_test::{AGENTS, page_through, store_with_agents};
use super::{Order, Selection};
use crate::read::agent_list::list_query;
use crate::read::agent_walk::{Plan, Stop, Walked};
use crate::read::selection::Term;
use agentindex_indexer::store::Dialect;
use sqlx::AnyPool;

/// Agent `i`'s key, score and block as `store_with_agents` writes them.
fn agent(i: usize) -> (String, f64, i64) {
    (
        format!("1:{i:05}"),
        ((i * 37) % 101) as f64,
        (i / 10) as i64,
    )
}

#[tokio::test]
async fn pages_follow_the_order_then_the_id_both_descending() {
    let (_dir, store) = store_with_agents().await;
    let pool = store.reader();
    let mut by_score: Vec<_> = (0..AGENTS).map(agent).collect();
    by_score.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    let mut by_block: Vec<_> = (0..AGENTS).map(agent).collect();
    by_block.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| b.0.cmp(&a.0)));
    let keys = |agents: &[(String, f64, i64)]| -> Vec<String> {
        agents.iter().map(|(key, ..)| key.clone()).collect()
    };
    // Skill `common`: every agent whose number is not a multiple of three (a walked term).
    let common = Selection {
        skill: Some("common".into()),
        ..Selection::default()
    };
    let with_common = |agents: &[(String, f64, i64)]| -> Vec<String> {
        keys(agents)
            .into_iter()
            .filter(|key| key[2..].parse::<usize>().unwrap() % 3 != 0)
            .collect()
    };
    for (selection, order, expected) in [
        (Selection::default(), Order::Reputation, keys(&by_score)),
        (Selection::default(), Order::Newest, keys(&by_block)),
        (common.clone(), Order::Reputation, with_common(&by_score)),
        (common.clone(), Order::Newest, with_common(&by_block)),
    ] {
        for may_walk in [true, false] {
            let paged = page_through(pool, &selection, order, 7, may_walk).await;
            assert_eq!(
                paged, expected,
                "{selection:?} in {order:?} order, walking {may_walk}"
            );
        }
    }
}

/// SQLite's plan of the statement `list_query` writes for a page after `after`.
async fn plan_of(
    pool: &AnyPool,
    selection: &Selection,
    order: Order,
    after: &Cursor,
    plan: Plan,
) -> String {
    let query = list_query(Dialect::Sqlite, selection, order, Some(after), 21, plan);
    // Parameters left unbound read as NULL: the plan does not depend on them.
    let rows: Vec<(i64, i64, i64, String)> =
        sqlx::query_as(&format!("EXPLAIN QUERY PLAN {}", query.sql()))
            .fetch_all(pool)
            .await
            .unwrap();
    rows.into_iter()
        .map(|(.., detail)| detail)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `plan` searches index `range.0` with the row-value range `range.1`.
fn searches(plan: &str, range: (&str, &str)) -> bool {
    plan.lines()
        .any(|line| line.starts_with("SEARCH") && line.contains(range.0) && line.contains(range.1))
}

#[tokio::test]
async fn a_page_after_a_cursor_is_a_range_of_the_orders_index() {
    let (_dir, store) = store_with_agents().await;
    let pool = store.reader();
    let deep_score = Cursor::Reputation {
        s: 3.0,
        k: "1:02000".into(),
    };
    let deep_block = Cursor::Newest {
        b: 40,
        k: "1:00405".into(),
    };
    let common = Term {
        kind: "skill",
        text: "common".into(),
    };
    let with_common = Selection {
        skill: Some("common".into()),
        ..Selection::default()
    };
    let everyone = Selection::default();
    let cases = [
        (
            &everyone,
            Order::Reputation,
            &deep_score,
            Walked::Everyone(Order::Reputation),
            ("agent_reputation_score", "(score,agent_key)<(?,?)"),
        ),
        (
            &everyone,
            Order::Newest,
            &deep_block,
            Walked::Everyone(Order::Newest),
            ("agents_newest", "(registered_block,agent_key)<(?,?)"),
        ),
        (
            &with_common,
            Order::Reputation,
            &deep_score,
            Walked::Term(common),
            ("agent_terms_score", "(score,agent_key)<(?,?)"),
        ),
    ];
    for (selection, order, after, walked, range) in cases {
        let walk = Plan::Walk(walked, Stop::AtBound(None));
        let plan = plan_of(pool, selection, order, after, walk).await;
        assert!(
            searches(&plan, range),
            "{order:?} after {after:?} walks from the cursor ({range:?}):\n{plan}"
        );
    }
    let plan = plan_of(
        pool,
        &everyone,
        Order::Reputation,
        &deep_score,
        Plan::Collect,
    )
    .await;
    assert!(
        searches(&plan, ("agent_reputation_score", "(score,agent_key)<(?,?)")),
        "collected in reputation order, the page starts at the cursor:\n{plan}"
    );
}
