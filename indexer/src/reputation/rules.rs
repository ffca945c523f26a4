//! The rules one chain's reputation is computed under: its payment tokens (decimals and dust),
//! the payment-score parameters, the feedback evidence weights, the trust rank's parameters and
//! the composite weights. Two instances with the same rules and
//! the same chain data compute the same scores.

use super::composite::Weights;
use super::evidence::FeedbackParams;
use super::payments::{Intermediaries, TokenRule};
use super::score::ScoreParams;
use super::trust::TrustParams;
use crate::config::{ChainConfig, ReputationConfig};
use crate::primitives::{CardanoNetwork, cardano_token, masumi_stablecoins};
use alloy::primitives::Address;
use std::collections::BTreeMap;

/// Reputation rules of one chain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReputationRules {
    /// The configured payment tokens; payments in any other token do not count.
    pub tokens: BTreeMap<Address, TokenRule>,
    /// Facilitators and settlement contracts: their transfers are not customers paying.
    pub intermediaries: Intermediaries,
    /// Payment-score parameters.
    pub params: ScoreParams,
    /// Feedback evidence weights.
    pub feedback: FeedbackParams,
    /// Trust rank parameters.
    pub trust: TrustParams,
    /// Composite weights.
    pub weights: Weights,
}

impl ReputationRules {
    /// The rules of `chain` under `reputation`. A dust threshold the config cannot express in
    /// the token's units was refused when the config loaded, so it reads as zero here.
    pub fn of_chain(chain: &ChainConfig, reputation: &ReputationConfig) -> Self {
        // The chain's own coin, paid straight to an agent contract, counts at 18 decimals
        // unless the config lists it (as the zero address) with rules of its own.
        let native = (
            Address::ZERO,
            TokenRule {
                decimals: 18,
                dust: Default::default(),
            },
        );
        let tokens = std::iter::once(native)
            .chain(chain.payment_tokens.iter().map(|token| {
                let rule = TokenRule {
                    decimals: token.decimals,
                    dust: token.dust_units().unwrap_or_default(),
                };
                (token.address, rule)
            }))
            .collect();
        Self {
            tokens,
            intermediaries: Intermediaries {
                facilitators: chain.x402.facilitators.iter().copied().collect(),
                settlement: chain.x402.batch_settlement().into_iter().collect(),
            },
            params: ScoreParams::from(reputation),
            feedback: FeedbackParams::from(&reputation.feedback),
            trust: TrustParams::from(&reputation.trust),
            weights: Weights::from(&reputation.weights),
        }
    }

    /// The rules of Cardano `network` under `reputation`: the same parameters as every chain's,
    /// ada (6 decimals) as the chain's own coin and Masumi's stablecoins (6 decimals) as its
    /// payment tokens, each as the 20-byte token it stands as (`primitives::cardano_token`).
    pub fn of_cardano(network: CardanoNetwork, reputation: &ReputationConfig) -> Self {
        let six = TokenRule {
            decimals: 6,
            dust: Default::default(),
        };
        let tokens = std::iter::once(Address::ZERO)
            .chain(
                masumi_stablecoins(network)
                    .iter()
                    .map(|unit| cardano_token(unit)),
            )
            .map(|token| (token, six))
            .collect();
        Self {
            tokens,
            params: ScoreParams::from(reputation),
            feedback: FeedbackParams::from(&reputation.feedback),
            trust: TrustParams::from(&reputation.trust),
            weights: Weights::from(&reputation.weights),
            ..Self::default()
        }
    }
}
