//! Protection of the HTTP API: a governor rate limit per client and a share of the server's
//! time per client ([`crate::time_share`]), both answered 429 with Retry-After when exceeded,
//! a client that used much of its share served at low priority ([`crate::low_priority_lane`])
//! (health and readiness are never limited, `/metrics` is, clients listed in
//! `[api] unlimited_clients` are not), and the configured CORS.
//! A client is what [`crate::client`] makes of the request: its address, or the address a
//! trusted proxy forwarded it for, an IPv6 one by its /64; the IPv6 clients of one /48 also
//! share a network's rate of [`CLIENTS_PER_NETWORK`] clients.

use crate::client::{CLIENTS_PER_NETWORK, ClientKey, NetworkKey};
use crate::low_priority_lane::LowPriorityLane;
use crate::metrics::ApiMetrics;
use crate::time_share::{TimeShare, retry_after_secs};
use agentindex_indexer::config::ApiConfig;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

/// Paths that are never rate limited: probes must answer however busy the server is.
/// (`/metrics` is limited: it reads the store, and anyone may ask for it.)
const UNLIMITED: [&str; 2] = ["/healthz", "/readyz"];
/// Folders of embedded files (served from memory, as cheap as `/healthz`), never rate limited:
/// a page's scripts must not eat the budget its queries need.
const UNLIMITED_FOLDERS: [&str; 2] = ["/explorer/", "/vendor/"];
/// Paths whose time is not charged here: a feed has its own share of computations and is
/// mostly streaming; a websocket's upgrade is instant and its operations are charged as they
/// run (`crate::graphql::operation_limits`).
const UNCHARGED: [&str; 2] = ["/feeds/reputation.jsonl", "/graphql/ws"];
/// Paths never moved to the low-priority lane, however much their client owes: `/metrics`
/// renders under a lock every scrape shares (the operator's own scraper too), so it must not
/// be held by a lowered thread.
const NEVER_LOWERED: [&str; 1] = ["/metrics"];
/// Forget idle clients every this many requests.
const RETAIN_EVERY: u64 = 4_096;

/// The per-client limiter, and the per-network one behind it.
#[derive(Clone)]
pub struct ClientLimiter {
    limiter: Arc<DefaultKeyedRateLimiter<ClientKey>>,
    networks: Arc<DefaultKeyedRateLimiter<NetworkKey>>,
    time: Arc<TimeShare>,
    lane: Arc<LowPriorityLane>,
    seen: Arc<AtomicU64>,
    metrics: Arc<ApiMetrics>,
}

impl ClientLimiter {
    /// A limiter as `[api]` configures it (zero values were refused when the config loaded),
    /// sharing out the server's time with `time`, running heavy clients' requests on `lane`.
    pub fn new(
        config: &ApiConfig,
        time: Arc<TimeShare>,
        lane: Arc<LowPriorityLane>,
        metrics: Arc<ApiMetrics>,
    ) -> Self {
        let per_minute =
            NonZeroU32::new(config.requests_per_minute_per_client).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(config.client_burst).unwrap_or(NonZeroU32::MIN);
        let share = NonZeroU32::new(CLIENTS_PER_NETWORK).unwrap_or(NonZeroU32::MIN);
        let times = |n: NonZeroU32| n.saturating_mul(share);
        Self {
            limiter: Arc::new(RateLimiter::keyed(
                Quota::per_minute(per_minute).allow_burst(burst),
            )),
            networks: Arc::new(RateLimiter::keyed(
                Quota::per_minute(times(per_minute)).allow_burst(times(burst)),
            )),
            time,
            lane,
            seen: Arc::new(AtomicU64::new(0)),
            metrics,
        }
    }
}

/// The middleware: refuses a client over its rate or its share of the server's time with 429
/// and how long to wait, runs a heavy client's requests on the low-priority lane, and charges
/// the time of what it lets through.
pub(crate) async fn rate_limit(
    State(limiter): State<ClientLimiter>,
    client: ClientKey,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if UNLIMITED.contains(&path)
        || UNLIMITED_FOLDERS.iter().any(|f| path.starts_with(f))
        || limiter.time.is_unlimited(client)
    {
        return next.run(request).await;
    }
    if limiter.seen.fetch_add(1, Ordering::Relaxed) % RETAIN_EVERY == RETAIN_EVERY - 1 {
        limiter.limiter.retain_recent();
        limiter.networks.retain_recent();
    }
    // An IPv4 client is its own network, so only IPv6 clients are counted twice.
    let network = client.network();
    let refused = match limiter.limiter.check_key(&client) {
        Err(not_until) => Some((not_until, client.to_string())),
        Ok(()) if client.is_ipv6() => (limiter.networks.check_key(&network).err())
            .map(|not_until| (not_until, format!("network {network}"))),
        Ok(()) => None,
    };
    if let Some((not_until, who)) = refused {
        let wait = not_until.wait_time_from(DefaultClock::default().now());
        let seconds = retry_after_secs(wait);
        limiter.metrics.rate_limited();
        return too_many(
            seconds,
            format!("rate limit for {who} exceeded; retry in {seconds} s"),
        );
    }
    if UNCHARGED.contains(&path) {
        return next.run(request).await;
    }
    if let Some(over) = limiter.time.refusal(client) {
        limiter.metrics.rate_limited();
        return too_many(over.retry_after_secs(), over.message());
    }
    // Charged however the request ends: a client that hangs up midway pays for what it used.
    let _charge = ChargeOnDrop {
        time: &limiter.time,
        client,
        started: Instant::now(),
    };
    if limiter.time.is_heavy(client) && !NEVER_LOWERED.contains(&path) {
        limiter.metrics.low_priority();
        let mut request = request;
        request
            .extensions_mut()
            .insert(crate::low_priority_lane::LoweredRequest);
        match limiter.lane.run(next.run(request)).await {
            Ok(response) => response,
            Err(closed) => (StatusCode::SERVICE_UNAVAILABLE, closed.to_string()).into_response(),
        }
    } else {
        next.run(request).await
    }
}

/// Charges a request's time to its client when dropped.
struct ChargeOnDrop<'a> {
    time: &'a TimeShare,
    client: ClientKey,
    started: Instant,
}

impl Drop for ChargeOnDrop<'_> {
    fn drop(&mut self) {
        self.time.charge(self.client, self.started.elapsed());
    }
}

/// 429 with `Retry-After: seconds`.
fn too_many(seconds: u64, message: String) -> Response {
    let mut response = (StatusCode::TOO_MANY_REQUESTS, message).into_response();
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_str(&seconds.to_string()).expect("digits"),
    );
    response
}

/// CORS for `origins` (`*` allows any origin); read-only methods only.
pub(crate) fn cors(origins: &[String]) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        // MCP's streamable HTTP sends its protocol version (and, from servers with sessions,
        // a session id) on every request after `initialize`.
        .allow_headers([
            header::CONTENT_TYPE,
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("mcp-session-id"),
        ]);
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
