//! The document fetcher against a real HTTP server on loopback: bodies and their validators,
//! conditional refresh, every way a host can misbehave ending as a clear, typed error, the
//! private hosts an operator lists (and nothing else private), and the deadline per document.

use crate::support;

use agentindex_indexer::config::PrivateHost;
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

#[tokio::test]
async fn a_listed_private_host_is_fetched_from_and_nothing_else_private_is() {
    let gateway = DocServer::start().await;
    let other = DocServer::start().await;
    let document = gateway.route("/ipfs/doc", Route::Body("application/json", b"{}".to_vec()));
    let elsewhere = other.route(
        "/card.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    let escape = gateway.route("/ipfs/escape", Route::Redirect(elsewhere.clone()));
    let port = url(&gateway.base).port().unwrap();
    let listed = |entries: &[String]| {
        Fetcher::new(FetchPolicy {
            allow_private: false,
            allow_http: true,
            private_hosts: entries
                .iter()
                .map(|e| PrivateHost::parse(e).unwrap())
                .collect(),
            ..FetchPolicy::default()
        })
        .unwrap()
    };
    let fetcher = listed(&[format!("127.0.0.1:{port}")]);
    assert!(fetcher.fetch(&url(&document), None).await.is_ok());
    // The same address on another port, and a redirect there, stay refused.
    for refused in [&elsewhere, &escape] {
        assert!(
            matches!(
                fetcher.fetch(&url(refused), None).await,
                Err(FetchError::Blocked {
                    reason: "loopback or private address",
                    ..
                })
            ),
            "{refused}"
        );
    }
    assert_eq!(
        other.hits("/card.json"),
        0,
        "nothing reached the other server"
    );

    // A listed name resolves to loopback and is fetched from; the metadata service is never,
    // listed or not, by address or by name.
    let fetcher = listed(&[
        format!("localhost:{port}"),
        "169.254.169.254".into(),
        "metadata.google.internal".into(),
    ]);
    let by_name = document.replace("127.0.0.1", "localhost");
    assert!(fetcher.fetch(&url(&by_name), None).await.is_ok());
    for never in [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
    ] {
        assert!(
            matches!(
                fetcher.fetch(&url(never), None).await,
                Err(FetchError::Blocked {
                    reason: "link-local or cloud metadata address",
                    ..
                })
            ),
            "{never}"
        );
    }
}

#[tokio::test]
async fn ipv4_written_inside_ipv6_is_refused_as_the_ipv4_it_is() {
    let server = DocServer::start().await;
    let card = server.route(
        "/card.json",
        Route::Body("application/json", b"{}".to_vec()),
    );
    let port = url(&card).port().unwrap();
    let strict = fetcher(false);
    for host in [
        "[::127.0.0.1]",
        "[::ffff:0:127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::1]",
        "[fec0::1]",
    ] {
        let refused = strict
            .fetch(&url(&format!("http://{host}:{port}/card.json")), None)
            .await;
        assert!(
            matches!(
                refused,
                Err(FetchError::Blocked {
                    reason: "loopback or private address",
                    ..
                })
            ),
            "{host}: {refused:?}"
        );
    }
    assert_eq!(server.hits("/card.json"), 0);
}

#[tokio::test]
async fn a_dripping_server_is_cut_off_at_the_deadline_across_retries() {
    let server = DocServer::start().await;
    let slow = server.route("/drip", Route::Trickle(Duration::from_millis(300)));
    let fetcher = Fetcher::new(FetchPolicy {
        allow_private: true,
        allow_http: true,
        total_timeout: Duration::from_secs(30),
        deadline: Duration::from_secs(1),
        retries: 3,
        ..FetchPolicy::default()
    })
    .unwrap();
    let started = std::time::Instant::now();
    let result = fetcher.fetch(&url(&slow), None).await;
    assert!(
        matches!(&result, Err(FetchError::Deadline { seconds: 1, .. })),
        "{result:?}"
    );
    assert!(
        result
            .unwrap_err()
            .to_string()
            .contains("1 s deadline for one document (documents.fetch_deadline_secs)")
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a refusal comes back, it does not hang"
    );
}
