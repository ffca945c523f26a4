//! The reputation feed asked for as an attacker would: past a client's share, and at many
//! blocks at once.

use super::*;

/// A client of its own (127.0.0.3) takes its share of feeds, the stored feed of the first of
/// [`STORED_FEEDS`] twice (made once, then kept); asked then for the other stored feed and the
/// latest, neither made yet, it is refused with 429 and neither is made: another client's
/// request for the latest is what makes it, the second feed made in all. (`/metrics` is
/// rendered at most once a `metrics_cache_secs`, so the count is read until it reaches what
/// is expected and then compared: a feed made for the refused client would have been counted
/// before its refusal was sent, and so before the count is read.)
pub(super) async fn a_client_past_its_feed_share_sets_nothing_to_work(target: &Target) {
    let client = |last: u8| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 0, last]))
            .build()
            .unwrap()
    };
    let get = |http: reqwest::Client, query: String| {
        let base = target.base.clone();
        async move {
            let response = http
                .get(format!("{base}/feeds/reputation.jsonl{query}"))
                .send()
                .await
                .unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let computations = "agentindex_api_feed_computations_total";
    let before = target.metric(computations).await;
    let (greedy, other) = (client(3), client(4));
    let [first, second] = STORED_FEEDS;
    for _ in 0..2 {
        let (status, body) = get(greedy.clone(), format!("?block={first}")).await;
        assert_eq!(status, 200, "a feed within the share: {body}");
    }
    assert_eq!(
        target.metric_reaching(computations, before + 1.0).await,
        before + 1.0
    );
    for query in [format!("?block={second}"), String::new()] {
        let (status, body) = get(greedy.clone(), query.clone()).await;
        assert_eq!(status, 429, "feed {query:?} past the share: {body}");
        assert!(body.contains("has taken its share"), "{body}");
    }
    let (status, body) = get(other, String::new()).await;
    assert_eq!(status, 200, "another client's latest feed: {body}");
    assert_eq!(
        target.metric_reaching(computations, before + 2.0).await,
        before + 2.0,
        "nothing was made for the client past its share"
    );
}

/// Twenty feed requests at different blocks at once: a stored block's is answered 200 with a
/// body, or 503 (its lane busy) or 429 (the client's share spent) with `Retry-After`; every
/// other block is refused at once with 404 naming the stored ones (nothing is computed for it).
pub(super) async fn feeds_at_many_blocks_are_bounded(target: &Target) {
    let asked = (1..=20).map(|block| {
        let url = format!("{}/feeds/reputation.jsonl?block={block}", target.base);
        let http = target.http.clone();
        async move {
            let started = Instant::now();
            let response = http.get(url).send().await.unwrap();
            let status = response.status().as_u16();
            let retry = response.headers().get("retry-after").is_some();
            let body = response.text().await.unwrap();
            (block, status, retry, body, started.elapsed())
        }
    });
    let answers = futures::future::join_all(asked).await;
    for (block, status, retry, body, took) in &answers {
        if STORED_FEEDS.contains(block) || *block == target.indexed {
            assert!(
                *status == 200 || ((*status == 503 || *status == 429) && *retry),
                "feed at block {block}: {status} {body}"
            );
            assert!(*took < Duration::from_secs(30), "feed at {block}: {took:?}");
        } else {
            assert_eq!(*status, 404, "feed at block {block}: {body}");
            assert!(
                body.contains("stored (10, 5)"),
                "the refusal names the stored blocks: {body}"
            );
            assert!(*took < REFUSAL_BUDGET, "refusal at {block} took {took:?}");
        }
    }
    assert!(
        answers.iter().any(|(_, status, ..)| *status == 200),
        "a stored feed was served"
    );
}
