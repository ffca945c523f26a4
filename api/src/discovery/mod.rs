//! x402 Bazaar discovery served from the index: `GET /discovery/resources`, in the shape x402
//! version 2 clients read from a facilitator's catalogue, listing the paid resources agents
//! declare in their cards and registration files (`read::x402_resources`), filtered as the
//! clients ask (`params`, with networks in any spelling, `networks`), each joined with the
//! agent's identity, reputation and page and the prober's last answer from it (`items`).

mod items;
mod networks;
mod params;

use crate::client_error;
use crate::read::x402_resources;
use crate::state::ApiState;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::collections::BTreeMap;

/// Where the listing is served.
pub const PATH: &str = "/discovery/resources";

/// `GET /discovery/resources`.
pub(crate) async fn resources(
    State(state): State<ApiState>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let wanted = match params::read(&query) {
        Ok(wanted) => wanted,
        Err(refused) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({ "error": refused.to_string() })),
            )
                .into_response();
        }
    };
    let pool = state.store.reader();
    match x402_resources::page(pool, &wanted.filter, wanted.limit, wanted.offset).await {
        Ok(page) => Json(items::answer(&page, wanted.limit, wanted.offset)).into_response(),
        Err(e) => client_error::hide("listing x402 resources", &e)
            .response(StatusCode::INTERNAL_SERVER_ERROR),
    }
}
