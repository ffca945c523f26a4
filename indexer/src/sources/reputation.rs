//! ERC-8004 Reputation Registry logs: feedback in all six shapes, revocations, responses.

use super::model::FeedbackShape;
use super::{DecodeError, Decoded, bytes32_text, event, legacy};
use agentindex_contracts::ReputationRegistry as R;
use alloy::primitives::{B256, I256};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == R::NewFeedback::SIGNATURE_HASH => {
            event::<R::NewFeedback>(log).map(|e| Decoded::NewFeedback {
                token_id: e.agentId,
                client: e.clientAddress,
                index: Some(e.feedbackIndex),
                value: I256::try_from(e.value).expect("int128 fits in int256"),
                decimals: e.valueDecimals,
                tag1: e.tag1,
                tag2: e.tag2,
                endpoint: e.endpoint,
                uri: e.feedbackURI,
                hash: e.feedbackHash,
                shape: FeedbackShape::Current,
            })
        }
        t if t == legacy::ScoreWithEndpoint::NewFeedback::SIGNATURE_HASH => {
            // tag1 is only in the topics (hashed); the plain text is lost in this shape.
            event::<legacy::ScoreWithEndpoint::NewFeedback>(log).map(|e| Decoded::NewFeedback {
                token_id: e.agentId,
                client: e.clientAddress,
                index: None,
                value: I256::try_from(i64::from(e.score)).expect("a u8 fits"),
                decimals: 0,
                tag1: String::new(),
                tag2: e.tag2,
                endpoint: e.endpoint,
                uri: e.feedbackUri,
                hash: e.feedbackHash,
                shape: FeedbackShape::ScoreWithEndpoint,
            })
        }
        t if t == legacy::Score::NewFeedback::SIGNATURE_HASH => {
            event::<legacy::Score::NewFeedback>(log).map(|e| Decoded::NewFeedback {
                token_id: e.agentId,
                client: e.clientAddress,
                index: None,
                value: I256::try_from(i64::from(e.score)).expect("a u8 fits"),
                decimals: 0,
                tag1: String::new(),
                tag2: e.tag2,
                endpoint: String::new(),
                uri: e.feedbackUri,
                hash: e.feedbackHash,
                shape: FeedbackShape::Score,
            })
        }
        t if t == legacy::ScoreBytes32Tags::NewFeedback::SIGNATURE_HASH => {
            event::<legacy::ScoreBytes32Tags::NewFeedback>(log).map(|e| Decoded::NewFeedback {
                token_id: e.agentId,
                client: e.clientAddress,
                index: None,
                value: I256::try_from(i64::from(e.score)).expect("a u8 fits"),
                decimals: 0,
                tag1: bytes32_text(&e.tag1),
                tag2: bytes32_text(&e.tag2),
                endpoint: String::new(),
                uri: e.fileuri,
                hash: e.filehash,
                shape: FeedbackShape::ScoreBytes32Tags,
            })
        }
        t if t == legacy::Int256Value::NewFeedback::SIGNATURE_HASH => {
            event::<legacy::Int256Value::NewFeedback>(log).map(|e| Decoded::NewFeedback {
                token_id: e.agentId,
                client: e.clientAddress,
                index: Some(e.feedbackIndex),
                value: e.value,
                decimals: e.valueDecimals,
                tag1: e.tag1,
                tag2: e.tag2,
                endpoint: e.endpoint,
                uri: e.feedbackURI,
                hash: e.feedbackHash,
                shape: FeedbackShape::Int256Value,
            })
        }
        t if t == legacy::Uint256Value::NewFeedback::SIGNATURE_HASH => {
            event::<legacy::Uint256Value::NewFeedback>(log).and_then(|e| {
                let value = I256::try_from(e.value).map_err(|_| DecodeError::Malformed {
                    event: legacy::Uint256Value::NewFeedback::SIGNATURE,
                    reason: format!("value {} does not fit a signed 256-bit integer", e.value),
                })?;
                Ok(Decoded::NewFeedback {
                    token_id: e.agentId,
                    client: e.clientAddress,
                    index: Some(e.feedbackIndex),
                    value,
                    decimals: e.valueDecimals,
                    tag1: e.tag1,
                    tag2: e.tag2,
                    endpoint: e.endpoint,
                    uri: e.feedbackURI,
                    hash: e.feedbackHash,
                    shape: FeedbackShape::Uint256Value,
                })
            })
        }
        t if t == R::FeedbackRevoked::SIGNATURE_HASH => {
            event::<R::FeedbackRevoked>(log).map(|e| Decoded::FeedbackRevoked {
                token_id: e.agentId,
                client: e.clientAddress,
                index: e.feedbackIndex,
            })
        }
        t if t == R::ResponseAppended::SIGNATURE_HASH => {
            event::<R::ResponseAppended>(log).map(|e| Decoded::ResponseAppended {
                token_id: e.agentId,
                client: e.clientAddress,
                index: e.feedbackIndex,
                responder: e.responder,
                uri: e.responseURI,
                hash: e.responseHash,
            })
        }
        t => return legacy::proxy_event(t).map(|name| Ok(Decoded::Ignored(name))),
    };
    Some(decoded)
}
