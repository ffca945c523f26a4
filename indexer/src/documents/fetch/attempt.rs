//! One attempt at a URL, within the per-attempt timeout and a slot of the concurrency limit:
//! each redirect hop checked and rate-limited per host, the conditional headers sent, and the
//! body read no further than the cap.

use super::error::network;
use super::{FetchError, Fetched, Fetcher, Validators};
use reqwest::header::{self, HeaderMap, HeaderValue};
use url::Url;

impl Fetcher {
    /// One attempt, redirects included, within the per-attempt timeout.
    pub(super) async fn fetch_once(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let seconds = self.policy.total_timeout.as_secs();
        tokio::time::timeout(self.policy.total_timeout, self.follow(url, validators))
            .await
            .unwrap_or_else(|_| {
                Err(FetchError::Timeout {
                    url: url.to_string(),
                    seconds,
                })
            })
    }

    /// Requests `url` and follows redirects, checking every hop.
    async fn follow(
        &self,
        url: &Url,
        validators: Option<&Validators>,
    ) -> Result<Fetched, FetchError> {
        let mut current = url.clone();
        let mut seen = vec![current.clone()];
        for _ in 0..=self.policy.max_redirects {
            let client = self.check(&current)?;
            let host = current.host_str().unwrap_or_default().to_string();
            self.per_host.until_key_ready(&host).await;
            let mut request = client.get(current.clone()).header(
                header::ACCEPT,
                "application/json, application/a2a+json;q=0.9, */*;q=0.5",
            );
            if let Some(v) = validators {
                if let Some(etag) = &v.etag {
                    request = request.header(header::IF_NONE_MATCH, etag);
                }
                if let Some(modified) = &v.last_modified {
                    request = request.header(header::IF_MODIFIED_SINCE, modified);
                }
            }
            let response = request.send().await.map_err(|e| network(&current, &e))?;
            let status = response.status();
            if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
                current = next_hop(&current, &response, &mut seen)?;
                continue;
            }
            if status == reqwest::StatusCode::NOT_MODIFIED {
                return Ok(Fetched::NotModified);
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: current.to_string(),
                    status: status.as_u16(),
                });
            }
            let headers = response.headers().clone();
            let bytes = self.read_capped(&current, response).await?;
            return Ok(Fetched::Body {
                bytes,
                content_type: text(&headers, header::CONTENT_TYPE),
                validators: Validators {
                    etag: text(&headers, header::ETAG),
                    last_modified: text(&headers, header::LAST_MODIFIED),
                },
                final_url: current,
            });
        }
        Err(FetchError::Redirects {
            url: current.to_string(),
            reason: format!("more than {} redirects", self.policy.max_redirects),
        })
    }

    /// The body, refusing to read past the cap (also when Content-Length already says so).
    async fn read_capped(
        &self,
        url: &Url,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, FetchError> {
        let limit = self.policy.max_bytes;
        let too_large = || FetchError::TooLarge {
            url: url.to_string(),
            limit,
        };
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| network(url, &e))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Where the redirect `response` to `current` points, noted in `seen`; a redirect without a
/// usable `Location`, or back to a URL already seen, is an error.
pub(super) fn next_hop(
    current: &Url,
    response: &reqwest::Response,
    seen: &mut Vec<Url>,
) -> Result<Url, FetchError> {
    let next = response
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .and_then(|l| current.join(l).ok())
        .ok_or_else(|| FetchError::Redirects {
            url: current.to_string(),
            reason: format!(
                "HTTP {} without a usable Location",
                response.status().as_u16()
            ),
        })?;
    if seen.contains(&next) {
        return Err(FetchError::Redirects {
            url: next.to_string(),
            reason: "redirect loop".into(),
        });
    }
    seen.push(next.clone());
    Ok(next)
}

/// The value of header `name`, when it is there and readable as text.
fn text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .map(str::to_string)
}
