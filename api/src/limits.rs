//! Protection of the HTTP API: a governor rate limit per client (429 with Retry-After when
//! exceeded; health and readiness are never limited, `/metrics` is) and the configured CORS.
//! A client is what [`crate::client`] makes of the request: its address, or the address a
//! trusted proxy forwarded it for, an IPv6 one by its /64.

use crate::client::ClientKey;
use crate::metrics::ApiMetrics;
use agentindex_indexer::config::ApiConfig;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

/// Paths that are never rate limited: probes must answer however busy the server is.
/// (`/metrics` is limited: it reads the store, and anyone may ask for it.)
const UNLIMITED: [&str; 2] = ["/healthz", "/readyz"];
/// Folders of embedded files (served from memory, as cheap as `/healthz`), never rate limited:
/// a page's scripts must not eat the budget its queries need.
const UNLIMITED_FOLDERS: [&str; 2] = ["/explorer/", "/vendor/"];
/// Forget idle clients every this many requests.
const RETAIN_EVERY: u64 = 4_096;

/// The per-client limiter.
#[derive(Clone)]
pub struct ClientLimiter {
    limiter: Arc<DefaultKeyedRateLimiter<ClientKey>>,
    seen: Arc<AtomicU64>,
    metrics: Arc<ApiMetrics>,
}

impl ClientLimiter {
    /// A limiter as `[api]` configures it (zero values were refused when the config loaded).
    pub fn new(config: &ApiConfig, metrics: Arc<ApiMetrics>) -> Self {
        let per_minute =
            NonZeroU32::new(config.requests_per_minute_per_client).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(config.client_burst).unwrap_or(NonZeroU32::MIN);
        Self {
            limiter: Arc::new(RateLimiter::keyed(
                Quota::per_minute(per_minute).allow_burst(burst),
            )),
            seen: Arc::new(AtomicU64::new(0)),
            metrics,
        }
    }
}

/// The middleware: refuses a client over its rate with 429 and how long to wait.
pub(crate) async fn rate_limit(
    State(limiter): State<ClientLimiter>,
    client: ClientKey,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if UNLIMITED.contains(&path) || UNLIMITED_FOLDERS.iter().any(|f| path.starts_with(f)) {
        return next.run(request).await;
    }
    if limiter.seen.fetch_add(1, Ordering::Relaxed) % RETAIN_EVERY == RETAIN_EVERY - 1 {
        limiter.limiter.retain_recent();
    }
    match limiter.limiter.check_key(&client) {
        Ok(()) => next.run(request).await,
        Err(not_until) => {
            limiter.metrics.rate_limited();
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                format!("rate limit for {client} exceeded; retry in {seconds} s"),
            )
                .into_response();
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_str(&seconds.max(1).to_string()).expect("digits"),
            );
            response
        }
    }
}

/// CORS for `origins` (`*` allows any origin); read-only methods only.
pub(crate) fn cors(origins: &[String]) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers([header::CONTENT_TYPE]);
    if origins.iter().any(|o| o == "*") {
        layer.allow_origin(Any)
    } else {
        let list: Vec<HeaderValue> = origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        layer.allow_origin(AllowOrigin::list(list))
    }
}
