//! The document fetcher against a real HTTP server on loopback: bodies and their validators,
//! conditional refresh, and every way a host can misbehave ending as a clear, typed error.

use crate::support;

use agentindex_indexer::documents::{FetchError, FetchPolicy, Fetched, Fetcher};
use std::time::Duration;
use support::doc_server::{DocServer, Route};
use url::Url;

fn fetcher(allow_private: bool) -> Fetcher {
    Fetcher::new(FetchPolicy {
        allow_private,
        allow_http: true,
        max_bytes: 64 * 1024,
        total_timeout: Duration::from_secs(2),
        retries: 1,
        ..FetchPolicy::default()
    })
    .unwrap()
}

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[tokio::test]
async fn a_body_comes_with_its_validators_and_an_unchanged_one_is_not_refetched() {
    let server = DocServer::start().await;
    let card = server.route(
        "/card.json",
        Route::Tagged("\"v1\"", b"{\"name\":\"A\"}".to_vec()),
    );
    let fetcher = fetcher(true);
    let Fetched::Body {
        bytes,
        validators,
        final_url,
        ..
    } = fetcher.fetch(&url(&card), None).await.unwrap()
    else {
        panic!("expected a body");
    };
    assert_eq!(bytes, b"{\"name\":\"A\"}");
    assert_eq!(final_url.as_str(), card);
    assert_eq!(validators.etag.as_deref(), Some("\"v1\""));
    assert_eq!(
        fetcher.fetch(&url(&card), Some(&validators)).await.unwrap(),
        Fetched::NotModified
    );
}

#[tokio::test]
async fn redirects_are_followed_and_checked_at_every_hop() {
    let server = DocServer::start().await;
    let target = server.route(
        "/final.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    let hop = server.route("/hop", Route::Redirect(target.clone()));
    let fetcher = fetcher(true);
    let Fetched::Body { final_url, .. } = fetcher.fetch(&url(&hop), None).await.unwrap() else {
        panic!("expected a body");
    };
    assert_eq!(final_url.as_str(), target);

    // A public-looking start that redirects into the cloud metadata service.
    let metadata = server.route(
        "/to-metadata",
        Route::Redirect("http://169.254.169.254/latest/meta-data/".into()),
    );
    assert!(matches!(
        fetcher.fetch(&url(&metadata), None).await,
        Err(FetchError::Blocked {
            reason: "link-local or cloud metadata address",
            ..
        })
    ));

    let a = format!("{}/loop-a", server.base);
    let b = server.route("/loop-b", Route::Redirect(a.clone()));
    server.route("/loop-a", Route::Redirect(b));
    assert!(matches!(
        fetcher.fetch(&url(&a), None).await,
        Err(FetchError::Redirects { reason, .. }) if reason == "redirect loop"
    ));

    for i in 0..8 {
        server.route(
            &format!("/chain-{i}"),
            Route::Redirect(format!("{}/chain-{}", server.base, i + 1)),
        );
    }
    assert!(matches!(
        fetcher.fetch(&url(&format!("{}/chain-0", server.base)), None).await,
        Err(FetchError::Redirects { reason, .. }) if reason.starts_with("more than")
    ));
}

#[tokio::test]
async fn loopback_is_refused_unless_allowed_by_address_and_by_name() {
    let server = DocServer::start().await;
    let card = server.route(
        "/card.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    let strict = fetcher(false);
    assert!(matches!(
        strict.fetch(&url(&card), None).await,
        Err(FetchError::Blocked {
            reason: "loopback or private address",
            ..
        })
    ));
    let by_name = card.replace("127.0.0.1", "localhost");
    let refused = strict.fetch(&url(&by_name), None).await;
    assert!(
        matches!(refused, Err(FetchError::Blocked { .. })),
        "a name that resolves to loopback is refused too: {refused:?}"
    );
    assert_eq!(server.hits("/card.json"), 0, "nothing reached the server");
    assert!(fetcher(true).fetch(&url(&by_name), None).await.is_ok());
}

#[tokio::test]
async fn hostile_bodies_end_as_errors_within_the_limits() {
    let server = DocServer::start().await;
    let fetcher = fetcher(true);
    let huge = server.route(
        "/huge",
        Route::Body("application/json", vec![b' '; 65 * 1024]),
    );
    assert!(matches!(
        fetcher.fetch(&url(&huge), None).await,
        Err(FetchError::TooLarge { .. })
    ));
    let declared = server.route("/declared", Route::HugeLength);
    assert!(matches!(
        fetcher.fetch(&url(&declared), None).await,
        Err(FetchError::TooLarge { .. })
    ));
    let endless = server.route("/endless", Route::Endless);
    assert!(matches!(
        fetcher.fetch(&url(&endless), None).await,
        Err(FetchError::TooLarge { .. })
    ));
    let slow = server.route("/slow", Route::Trickle(Duration::from_millis(200)));
    let started = std::time::Instant::now();
    assert!(matches!(
        fetcher.fetch(&url(&slow), None).await,
        Err(FetchError::Timeout { .. })
    ));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "bounded by timeout and retries"
    );
    let gone = server.route("/gone", Route::Status(404));
    assert!(matches!(
        fetcher.fetch(&url(&gone), None).await,
        Err(FetchError::Status { status: 404, .. })
    ));
    let failing = server.route("/failing", Route::Status(503));
    assert!(fetcher.fetch(&url(&failing), None).await.is_err());
    assert_eq!(server.hits("/failing"), 2, "a 503 is retried once");
    assert_eq!(server.hits("/gone"), 1, "a 404 is not retried");
}

#[tokio::test]
async fn schemes_other_than_http_are_refused() {
    let fetcher = fetcher(true);
    for text in ["ftp://127.0.0.1/a", "file:///etc/passwd"] {
        assert!(
            matches!(
                fetcher.fetch(&url(text), None).await,
                Err(FetchError::Scheme { .. })
            ),
            "{text}"
        );
    }
    let https_only = Fetcher::new(FetchPolicy {
        allow_private: true,
        ..FetchPolicy::default()
    })
    .unwrap();
    assert!(matches!(
        https_only.fetch(&url("http://127.0.0.1:1/a"), None).await,
        Err(FetchError::Scheme { .. })
    ));
}
