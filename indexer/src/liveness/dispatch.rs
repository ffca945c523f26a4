//! [`Prober::probe`]: one endpoint asked the question of its kind (`a2a.rs`, `mcp.rs`,
//! `x402.rs`, `web.rs`) within the probe timeout, and what it saw cleaned for keeping
//! (`clean.rs`). Apart from `prober.rs`, which the kinds' probes send through, so no file of
//! them imports another that imports it back.

use super::{Kind, Outcome, Prober, Reason, Status, Target, a2a, clean, mcp, web, x402};
use tokio::time::Instant;
use url::Url;

impl Prober {
    /// Probes `target` with the question of its kind, within the probe timeout.
    pub async fn probe(&self, target: &Target) -> Outcome {
        let Ok(url) = Url::parse(&target.url) else {
            return Outcome::of(target, Status::Blocked).failed(
                Status::Blocked,
                Reason::Unsupported,
                format!("{:?} is not a URL", target.url),
            );
        };
        let deadline = Instant::now() + self.timeout();
        let probing = async {
            match target.kind {
                Kind::A2aCard => a2a::card(self, target, url, deadline).await,
                Kind::A2aJsonrpc => a2a::jsonrpc(self, target, url, deadline).await,
                Kind::A2aRest => a2a::rest(self, target, url, deadline).await,
                Kind::Mcp => mcp::probe(self, target, url, deadline).await,
                Kind::X402 => x402::probe(self, target, url, deadline).await,
                Kind::Web => web::probe(self, target, url, deadline).await,
            }
        };
        let seconds = self.timeout().as_secs();
        let outcome = tokio::time::timeout_at(deadline, probing)
            .await
            .unwrap_or_else(|_| {
                Outcome::of(target, Status::Down).failed(
                    Status::Down,
                    Reason::Timeout,
                    format!("no complete answer within {seconds} s"),
                )
            });
        clean::outcome(outcome)
    }
}
