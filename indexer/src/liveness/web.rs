//! Web probes: a GET of the page. Up on any answer below 400 (and on 401 and 403, which say
//! the server is there and guards the page), degraded on other client errors, down on server
//! errors and no answer.

use super::prober::{answered, unanswered, unexpected_status};
use super::{Outcome, Prober, Target};
use crate::documents::Request;
use reqwest::header::ACCEPT;
use tokio::time::Instant;
use url::Url;

/// Asks for the page at `url`.
pub(super) async fn probe(
    prober: &Prober,
    target: &Target,
    url: Url,
    deadline: Instant,
) -> Outcome {
    let mut request =
        Request::get(url).header(ACCEPT, "text/html, application/json;q=0.9, */*;q=0.5");
    // Only the status matters: the first bytes are enough.
    request.enough = Some(|body: &[u8], _| !body.is_empty());
    match prober.send(&request, deadline).await {
        Ok((answer, latency)) if answer.status < 400 || matches!(answer.status, 401 | 403) => {
            answered(target, &answer, latency, super::Status::Up)
        }
        Ok((answer, latency)) => unexpected_status(target, &answer, latency),
        Err(error) => unanswered(target, &error),
    }
}
