//! One request of any method, under the same address rules, per-host limit and concurrency
//! slots as a document fetch, whose answer is whatever the server says: any status comes back
//! as an [`Answer`], not an error. The prober asks endpoints harmless questions with it. No
//! retries: a probe reports what it saw. A GET follows redirects, every hop checked again;
//! any other method is never redirected (its answer is the redirect itself), so a URL chosen
//! by a stranger cannot send a POST or DELETE on to another address.

use super::attempt::next_hop;
use super::error::network;
use super::{FetchError, Fetcher};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use tokio::time::Instant;
use url::Url;

/// A request to send.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// Where to.
    pub url: Url,
    /// Headers besides the client's own (`User-Agent`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Headers sent only to the first URL's host (credentials): a redirect elsewhere goes
    /// without them.
    pub host_only_headers: Vec<(HeaderName, HeaderValue)>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Stops reading the body once what was read satisfies it (a streamed answer that stays
    /// open after the part asked for, such as an MCP server's event stream). It is given the
    /// body so far and how much of it it was given before, so it need look only at what is new.
    pub enough: Option<fn(&[u8], usize) -> bool>,
}

impl Request {
    /// A GET of `url` with no headers of its own.
    pub fn get(url: Url) -> Self {
        Self {
            method: Method::GET,
            url,
            headers: Vec::new(),
            host_only_headers: Vec::new(),
            body: None,
            enough: None,
        }
    }

    /// A POST of `body` to `url`.
    pub fn post(url: Url, body: Vec<u8>) -> Self {
        Self {
            method: Method::POST,
            url,
            headers: Vec::new(),
            host_only_headers: Vec::new(),
            body: Some(body),
            enough: None,
        }
    }

    /// The same with header `name` set to `value` (a value that is not a valid header is left
    /// out).
    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((name, value));
        }
        self
    }

    /// The same with header `name` set to `value` for the first URL's host only (a credential:
    /// never sent on to where a redirect points elsewhere).
    pub fn host_only_header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(mut value) = HeaderValue::from_str(value) {
            value.set_sensitive(true);
            self.host_only_headers.push((name, value));
        }
        self
    }
}

/// What the server answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, up to the policy's cap or until the request's `enough` said so.
    pub body: Vec<u8>,
    /// The URL that answered, after redirects.
    pub final_url: Url,
}

impl Answer {
    /// Header `name` as text, when present and readable.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Fetcher {
    /// Sends `request`, following redirects, and gives up at `deadline` (or the policy's
    /// per-attempt timeout, whichever comes first).
    pub async fn request(
        &self,
        request: &Request,
        deadline: Instant,
    ) -> Result<Answer, FetchError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let deadline = deadline.min(Instant::now() + self.policy.total_timeout);
        let seconds = self.policy.total_timeout.as_secs();
        tokio::time::timeout_at(deadline, self.send_following(request))
            .await
            .unwrap_or_else(|_| {
                Err(FetchError::Timeout {
                    url: request.url.to_string(),
                    seconds,
                })
            })
    }

    async fn send_following(&self, request: &Request) -> Result<Answer, FetchError> {
        let mut current = request.url.clone();
        let method = request.method.clone();
        let body = request.body.clone();
        let mut seen = vec![current.clone()];
        for _ in 0..=self.policy.max_redirects {
            let client = self.check(&current)?;
            let host = current.host_str().unwrap_or_default().to_string();
            self.per_host.until_key_ready(&host).await;
            let mut builder = client.request(method.clone(), current.clone());
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            if current.host_str() == request.url.host_str() {
                for (name, value) in &request.host_only_headers {
                    builder = builder.header(name, value);
                }
            }
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = builder.send().await.map_err(|e| network(&current, &e))?;
            let status = response.status();
            let follows = status.is_redirection()
                && status != StatusCode::NOT_MODIFIED
                && method == Method::GET;
            if follows {
                current = next_hop(&current, &response, &mut seen)?;
                continue;
            }
            let headers = response.headers().clone();
            let body = self.read_until(&current, response, request.enough).await?;
            return Ok(Answer {
                status: status.as_u16(),
                headers,
                body,
                final_url: current,
            });
        }
        Err(FetchError::Redirects {
            url: current.to_string(),
            reason: format!("more than {} redirects", self.policy.max_redirects),
        })
    }

    /// The body up to the cap, or less once `enough` is satisfied.
    async fn read_until(
        &self,
        url: &Url,
        mut response: reqwest::Response,
        enough: Option<fn(&[u8], usize) -> bool>,
    ) -> Result<Vec<u8>, FetchError> {
        let limit = self.policy.max_bytes;
        let too_large = || FetchError::TooLarge {
            url: url.to_string(),
            limit,
        };
        // A request that reads only until `enough` may stop well before a long body ends.
        if enough.is_none() && response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| network(url, &e))? {
            let (before, room) = (body.len(), limit - body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if enough.is_some_and(|enough| enough(&body, before)) {
                break;
            }
            if chunk.len() > room {
                return Err(too_large());
            }
        }
        Ok(body)
    }
}
