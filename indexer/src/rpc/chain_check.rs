//! Which endpoints serve the configured chain: each is asked `eth_chainId` once, all at once, so
//! a wrong or dead endpoint is known in the first round trip; those serving another chain are
//! left out of the rotation for good.

use super::{ChainRpc, RpcError, RpcErrorKind, classify};
use crate::health::Problem;
use crate::metrics::metrics;
use alloy::providers::Provider;
use std::sync::atomic::Ordering;

/// What asking every endpoint for its chain id found.
#[derive(Debug)]
pub enum ChainCheck {
    /// At least one endpoint serves the chain; those that serve another are excluded.
    Serving,
    /// Every endpoint answered, none with the configured chain id (the first one's id).
    WrongChain {
        /// The chain id the first endpoint reported.
        actual: u64,
    },
    /// No endpoint serves the chain, and some did not answer: try again later.
    Unanswered(RpcError),
}

impl ChainRpc {
    /// Asks every endpoint not yet excluded for its chain id, once and concurrently, and
    /// excludes those serving another chain than `expected`.
    pub async fn verify_endpoints(&self, expected: u64) -> ChainCheck {
        let asked = self
            .endpoints
            .iter()
            .enumerate()
            .map(|(index, endpoint)| async move {
                if endpoint.excluded.load(Ordering::Relaxed) {
                    return None;
                }
                let started = std::time::Instant::now();
                let outcome = self.send(index, endpoint.provider.get_chain_id()).await;
                let answer = match outcome {
                    Ok(Ok(id)) => Ok(id),
                    Ok(Err(error)) => Err(classify::classify(&error).redacted()),
                    Err(_) => Err(RpcErrorKind::Silent(format!(
                        "no answer within {:?}",
                        self.timeout
                    ))),
                };
                let failure = answer.as_ref().err().map(RpcErrorKind::label);
                metrics().rpc(&endpoint.shown, "eth_chainId", started.elapsed(), failure);
                Some((index, answer))
            });
        let answers = futures::future::join_all(asked).await;
        let mut serving = false;
        let mut wrong = None;
        let mut unanswered = None;
        for (index, answer) in answers.into_iter().flatten() {
            let endpoint = &self.endpoints[index];
            match answer {
                Ok(id) if id == expected => {
                    self.health.answered(index);
                    serving = true;
                }
                Ok(id) => {
                    let error = format!(
                        "eth_chainId answers {id}, the config says {expected}: this endpoint is not used"
                    );
                    self.health.failed(index, Problem::WrongChain, &error);
                    endpoint.excluded.store(true, Ordering::Relaxed);
                    wrong.get_or_insert(id);
                }
                Err(kind) => {
                    match kind.problem() {
                        Some(problem) => self.health.failed(index, problem, &kind.to_string()),
                        None => self.health.answered(index),
                    }
                    unanswered.get_or_insert(RpcError {
                        method: "eth_chainId",
                        endpoint: endpoint.shown.clone(),
                        kind,
                    });
                }
            }
        }
        match (serving, unanswered, wrong) {
            (true, _, _) => ChainCheck::Serving,
            (false, Some(error), _) => ChainCheck::Unanswered(error),
            (false, None, Some(actual)) => ChainCheck::WrongChain { actual },
            // Every endpoint was excluded by an earlier check.
            (false, None, None) => ChainCheck::WrongChain { actual: 0 },
        }
    }
}
