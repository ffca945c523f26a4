//! The explorer at `/` and GraphiQL's files: pages and scripts embedded in the binary, so both
//! work on a machine with no internet and need nothing beside `agentindex`.
//!
//! The explorer is a single page (`api/assets/explorer/index.html`) whose scripts route by URL:
//! `/` searches, `/agents/{id}` shows one agent, `/ecosystem` the whole index. Each of those
//! paths answers the same page, so a link to any of them can be shared and reloaded. Its
//! scripts read only the public GraphQL API (`/graphql`, `/graphql/ws`), as any client would.
//! GraphiQL (`GET /graphql`, answered in `http`) loads its builds from `/vendor/`. [`assets`]
//! holds the embedded files.

mod assets;

pub use assets::{own_bytes, vendor_builds, vendor_bytes};

use assets::Asset;
use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// What the explorer's page may load and connect to: its own files and API only. Documents the
/// explorer shows are hostile input; no script of theirs may run even if one slipped through.
/// `connect-src 'self'` takes in websockets to the same origin (CSP level 3) and no others, so
/// a script that did slip through could not open a socket to anywhere else either.
const EXPLORER_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     frame-ancestors 'none'; form-action 'self'";

/// GraphiQL's policy: the same, but GraphiQL's build writes a `<style>` element of its own and
/// its stylesheet carries its fonts as `data:` URLs. It shows answers (hostile documents
/// included) as text in its editor; no script but its own runs, and no site may frame it.
const GRAPHIQL_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; font-src 'self' data:; img-src 'self' data:; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; \
     form-action 'self'";

/// The explorer's routes: its page at every path it routes, and the embedded files.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/ecosystem", get(page))
        .route("/agents/{*id}", get(page))
        .route("/explorer/{*file}", get(explorer_file))
        .route("/vendor/{*file}", get(vendor_file))
}

/// The explorer's page, for each of its routes.
async fn page(headers: HeaderMap) -> Response {
    let mut response = serve(assets::page(), &headers);
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(EXPLORER_POLICY),
    );
    response
}

/// GraphiQL's page (`GET /graphql` without a query), under its own policy.
pub(crate) fn graphiql_page() -> Response {
    (
        [(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(GRAPHIQL_POLICY),
        )],
        axum::response::Html(assets::GRAPHIQL_PAGE),
    )
        .into_response()
}

async fn explorer_file(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match assets::explorer(&file) {
        Some(asset) => serve(asset, &headers),
        None => not_found(&format!("/explorer/{file}")),
    }
}

async fn vendor_file(Path(file): Path<String>, headers: HeaderMap) -> Response {
    match assets::vendor(&file) {
        Some(asset) => serve(asset, &headers),
        None => not_found(&format!("/vendor/{file}")),
    }
}

fn not_found(path: &str) -> Response {
    (StatusCode::NOT_FOUND, format!("{path}: no such file")).into_response()
}

/// Answers `asset`: 304 when the client holds this version (its ETag), else the bytes,
/// gzipped as stored when the client takes gzip, inflated here when it does not. Browsers
/// revalidate each time (`no-cache`), so a new binary's files are never mixed with old ones.
fn serve(asset: &'static Asset, headers: &HeaderMap) -> Response {
    let etag = asset.etag();
    let mut response_headers = HeaderMap::new();
    response_headers.insert(header::ETAG, etag.clone());
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if asset.gzipped {
        response_headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .any(|held| held == etag || held == "*")
    {
        return (StatusCode::NOT_MODIFIED, response_headers).into_response();
    }
    response_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    if !asset.gzipped {
        return (response_headers, asset.body).into_response();
    }
    if accepts_gzip(headers) {
        response_headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        return (response_headers, asset.body).into_response();
    }
    match asset.inflated() {
        Ok(body) => (response_headers, body).into_response(),
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("inflating the embedded {}: {error}", asset.path),
        )
            .into_response(),
    }
}

/// Whether `Accept-Encoding` names gzip (or `*`) without refusing it (`q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_encoding(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        headers
    }

    #[test]
    fn gzip_is_sent_only_to_clients_that_take_it() {
        assert!(accepts_gzip(&with_encoding("gzip, deflate, br")));
        assert!(accepts_gzip(&with_encoding("br;q=1.0, GZIP;q=0.5")));
        assert!(accepts_gzip(&with_encoding("*")));
        assert!(!accepts_gzip(&with_encoding("gzip;q=0, br")));
        assert!(!accepts_gzip(&with_encoding("identity")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
