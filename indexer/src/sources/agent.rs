//! Agent contract logs: the card, ownership, liveness, payments, withdrawals and ratings.

use super::model::{CardFields, PaymentFields, SkillFields};
use super::{DecodeError, Decoded, event, hex_address, hex_b256};
use agentindex_contracts::AgentCard as A;
use alloy::primitives::{Address, B256};
use alloy::rpc::types::Log;
use alloy::sol_types::SolEvent;

pub(super) fn decode(topic0: B256, log: &Log) -> Option<Result<Decoded, DecodeError>> {
    let decoded = match topic0 {
        t if t == A::CardUpdated::SIGNATURE_HASH => {
            event::<A::CardUpdated>(log).map(|e| Decoded::CardUpdated(Box::new(card(e.card))))
        }
        t if t == A::OwnershipTransferred::SIGNATURE_HASH => event::<A::OwnershipTransferred>(log)
            .map(|e| Decoded::AgentOwnerChanged {
                new_owner: e.newOwner,
            }),
        t if t == A::ActiveChanged::SIGNATURE_HASH => {
            event::<A::ActiveChanged>(log).map(|e| Decoded::ActiveChanged(e.active))
        }
        t if t == A::HeartbeatIntervalChanged::SIGNATURE_HASH => {
            event::<A::HeartbeatIntervalChanged>(log)
                .map(|e| Decoded::HeartbeatIntervalChanged(e.interval))
        }
        t if t == A::Heartbeat::SIGNATURE_HASH => {
            event::<A::Heartbeat>(log).map(|e| Decoded::Heartbeat(e.timestamp))
        }
        t if t == A::PaymentReceived::SIGNATURE_HASH => {
            event::<A::PaymentReceived>(log).map(|e| Decoded::PaymentReceived {
                payer: e.payer,
                token: e.token,
                amount: e.amount,
            })
        }
        t if t == A::Withdrawn::SIGNATURE_HASH => {
            event::<A::Withdrawn>(log).map(|e| Decoded::Withdrawn {
                token: e.token,
                to: e.to,
                amount: e.amount,
            })
        }
        t if t == A::Rated::SIGNATURE_HASH => event::<A::Rated>(log).map(|e| Decoded::Rated {
            rater: e.rater,
            score: e.score,
        }),
        _ => return None,
    };
    Some(decoded)
}

pub(crate) fn card(c: A::CardData) -> CardFields {
    let payment = (c.payment.payTo != Address::ZERO).then(|| PaymentFields {
        asset: hex_address(&c.payment.asset),
        chain_id: c.payment.chainId.to_string(),
        amount: c.payment.amount.to_string(),
        pay_to: hex_address(&c.payment.payTo),
    });
    CardFields {
        name: c.name,
        description: c.description,
        url: c.url,
        version: c.version,
        default_input_modes: c.defaultInputModes,
        default_output_modes: c.defaultOutputModes,
        streaming: c.streaming,
        push_notifications: c.pushNotifications,
        skills: c
            .skills
            .into_iter()
            .map(|s| SkillFields {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
            })
            .collect(),
        payment,
        card_uri: c.cardURI,
        card_hash: hex_b256(&c.cardHash),
    }
}
