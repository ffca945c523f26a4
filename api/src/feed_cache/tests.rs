//! Tests of the feed cache: single flight per lane, the lanes apart, the client's share, the
//! timeout and hidden failures, the byte bound.

use super::*;
use futures_util::TryStreamExt;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::oneshot;

const AT: FeedKey = FeedKey {
    chain_id: 1,
    block: 10,
    stored: true,
};

fn client(n: u8) -> ClientKey {
    ClientKey::of(std::net::IpAddr::from([192, 0, 2, n]))
}

fn cache(max_bytes: usize, timeout: Duration) -> Arc<FeedCache> {
    Arc::new(FeedCache::new(
        max_bytes,
        timeout,
        Counter::default(),
        Vec::new(),
    ))
}

/// A computation writing `lines`.
fn lines(
    lines: &'static [&'static str],
) -> impl FnOnce(FeedWriter) -> std::future::Ready<io::Result<FeedWriter>> + Send + 'static {
    move |mut writer| {
        let written = lines
            .iter()
            .try_for_each(|l| writer.write_line(l.as_bytes()));
        std::future::ready(written.map(|()| writer))
    }
}

async fn body(feed: &Feed) -> String {
    let chunks: Vec<axum::body::Bytes> = feed.chunks(1 << 16).try_collect().await.unwrap();
    String::from_utf8(chunks.concat()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_requests_for_one_feed_compute_it_once_and_another_waits_its_turn() {
    let cache = cache(1 << 20, Duration::from_secs(30));
    let computed = Arc::new(AtomicUsize::new(0));
    let (release, released) = oneshot::channel::<()>();
    let count = Arc::clone(&computed);
    let first = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move {
            let compute = move |mut writer: FeedWriter| async move {
                count.fetch_add(1, Ordering::SeqCst);
                released.await.ok();
                writer.write_line(b"line")?;
                Ok::<_, io::Error>(writer)
            };
            cache.get(client(9), AT, 1, Lane::Stored, compute).await
        }
    });
    // The first computation is running once its lane holds it.
    while cache.running.lock().unwrap()[Lane::Stored.index()].is_none() {
        tokio::task::yield_now().await;
    }
    let second = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move {
            cache
                .get(client(9), AT, 1, Lane::Stored, lines(&["other"]))
                .await
        }
    });
    let other_block = FeedKey { block: 9, ..AT };
    let busy = cache
        .get(client(9), other_block, 1, Lane::Stored, lines(&[]))
        .await;
    assert!(
        matches!(
            busy,
            Err(FeedCacheError::Busy {
                computing: 10,
                lane: Lane::Stored
            })
        ),
        "{busy:?}"
    );
    release.send(()).unwrap();
    let (first, second) = (
        first.await.unwrap().unwrap(),
        second.await.unwrap().unwrap(),
    );
    assert_eq!(body(&first).await, "line\n");
    assert_eq!(
        body(&second).await,
        "line\n",
        "the second got the first's feed"
    );
    assert_eq!(computed.load(Ordering::SeqCst), 1);
    let again = cache
        .get(client(9), AT, 1, Lane::Stored, lines(&["recomputed"]))
        .await
        .unwrap();
    assert_eq!(body(&again).await, "line\n", "kept");
    let changed = cache
        .get(client(9), AT, 2, Lane::Stored, lines(&["new"]))
        .await
        .unwrap();
    assert_eq!(
        body(&changed).await,
        "new\n",
        "a changed database recomputes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_stored_lane_holds_up_neither_the_newest_feed_nor_its_own_waiters() {
    let cache = cache(1 << 20, Duration::from_secs(30));
    let (release, released) = oneshot::channel::<()>();
    let past = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move {
            let compute = move |writer: FeedWriter| async move {
                released.await.ok();
                Ok::<_, io::Error>(writer)
            };
            cache.get(client(9), AT, 1, Lane::Stored, compute).await
        }
    });
    while cache.running.lock().unwrap()[Lane::Stored.index()].is_none() {
        tokio::task::yield_now().await;
    }
    let newest = FeedKey { block: 20, ..AT };
    let feed = cache
        .get(client(9), newest, 1, Lane::Newest, lines(&["newest"]))
        .await
        .unwrap();
    assert_eq!(body(&feed).await, "newest\n");
    release.send(()).unwrap();
    assert!(past.await.unwrap().is_ok());
}

#[test]
fn a_client_takes_its_share_of_feeds_and_others_and_the_operators_have_their_own() {
    let operator: agentindex_indexer::config::IpNetwork = "198.51.100.0/24".parse().unwrap();
    let cache = FeedCache::new(
        1 << 20,
        Duration::from_secs(30),
        Counter::default(),
        vec![operator],
    );
    for _ in 0..FEEDS_PER_CLIENT {
        cache.charge(client(1)).unwrap();
    }
    let refused = cache.charge(client(1)).unwrap_err();
    assert!(
        matches!(
            refused,
            FeedCacheError::ClientShare {
                period_secs: 30,
                ..
            }
        ),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .starts_with("192.0.2.1 has taken its share of reputation feeds (2 in a row"),
        "{refused}"
    );
    assert!(
        refused
            .retry_after_secs()
            .is_some_and(|s| (1..=30).contains(&s))
    );
    cache
        .charge(client(2))
        .expect("other clients have their own share");
    let own = ClientKey::of(std::net::IpAddr::from([198, 51, 100, 7]));
    for _ in 0..3 * FEEDS_PER_CLIENT {
        cache
            .charge(own)
            .expect("the operator's clients are not counted");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_computation_is_stopped_and_a_failure_is_hidden_then_the_next_one_runs() {
    let cache = cache(1 << 20, Duration::from_millis(50));
    let slow = cache
        .get(
            client(9),
            AT,
            1,
            Lane::Stored,
            |writer: FeedWriter| async move {
                std::future::pending::<()>().await;
                Ok::<_, io::Error>(writer)
            },
        )
        .await;
    assert!(
        matches!(slow, Err(FeedCacheError::TimedOut { block: 10, .. })),
        "{slow:?}"
    );
    let failed = cache
        .get(client(9), AT, 1, Lane::Stored, |_: FeedWriter| async {
            Err::<FeedWriter, _>("no such table: agent_reputation")
        })
        .await
        .unwrap_err();
    let message = failed.to_string();
    assert!(
        message.contains("error id") && !message.contains("agent_reputation"),
        "{message}"
    );
    let ok = cache
        .get(client(9), AT, 1, Lane::Stored, lines(&["x"]))
        .await;
    assert!(ok.is_ok(), "nothing is left running: {ok:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_feeds_stay_within_their_bytes() {
    let cache = cache(4096, Duration::from_secs(30));
    const LINE: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    for block in 0..20 {
        let key = FeedKey { block, ..AT };
        cache
            .get(client(9), key, 1, Lane::Stored, lines(&[LINE; 10]))
            .await
            .unwrap();
        assert!(cache.bytes() <= 4096, "{}", cache.bytes());
    }
    assert!(cache.bytes() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_past_its_share_gets_a_kept_feed_but_sets_nothing_to_work() {
    let cache = cache(1 << 20, Duration::from_secs(30));
    let kept = cache
        .get(client(1), AT, 1, Lane::Stored, lines(&["kept"]))
        .await
        .unwrap();
    for _ in 0..FEEDS_PER_CLIENT {
        cache.charge(client(1)).unwrap();
    }
    let computed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&computed);
    let other = FeedKey { block: 11, ..AT };
    let refused = cache
        .get(
            client(1),
            other,
            1,
            Lane::Stored,
            move |writer: FeedWriter| {
                count.fetch_add(1, Ordering::SeqCst);
                std::future::ready(Ok::<_, io::Error>(writer))
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, FeedCacheError::ClientShare { .. }),
        "{refused:?}"
    );
    assert_eq!(computed.load(Ordering::SeqCst), 0, "nothing made for it");
    let again = cache
        .get(client(1), AT, 1, Lane::Stored, lines(&["recomputed"]))
        .await
        .expect("a kept feed is not withheld");
    assert_eq!(body(&again).await, body(&kept).await);
    cache
        .get(client(2), other, 1, Lane::Stored, lines(&["other"]))
        .await
        .expect("another client's share is its own");
}
