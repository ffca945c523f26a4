//! x402 batch-settlement logs: a channel's configuration when it opens (its payer, receiver and
//! token) and each claim on it, the moment value is committed to the receiver. Deposits,
//! settlements, refunds and withdrawals are known but carry nothing reputation reads: the
//! contract's payout to the receiver is a token `Transfer` from the contract, and its payers are
//! those of the channels claimed.

use super::{DecodeError, Decoded, event};
use agentindex_contracts::X402BatchSettlement as S;
use alloy::primitives::{B256, U256};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == S::ChannelCreated::SIGNATURE_HASH => {
            event::<S::ChannelCreated>(log).map(|e| Decoded::ChannelCreated {
                channel: e.channelId,
                payer: e.config.payer,
                receiver: e.config.receiver,
                token: e.config.token,
            })
        }
        t if t == S::Claimed::SIGNATURE_HASH => {
            event::<S::Claimed>(log).map(|e| Decoded::ChannelClaimed {
                channel: e.channelId,
                amount: U256::from(e.claimAmount),
            })
        }
        t if t == S::Deposited::SIGNATURE_HASH => Ok(Decoded::Ignored("Deposited")),
        t if t == S::Settled::SIGNATURE_HASH => Ok(Decoded::Ignored("Settled")),
        t if t == S::Refunded::SIGNATURE_HASH => Ok(Decoded::Ignored("Refunded")),
        _ => return None,
    };
    Some(decoded)
}
