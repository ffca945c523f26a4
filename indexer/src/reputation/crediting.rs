//! Which agents a transfer or a channel claim is credited to, decided from the agents' payment
//! addresses over time. A token transfer is a payment of every agent its recipient is bound to
//! at the transfer (the agent's latest binding at or before it names the recipient) and an
//! outflow of every agent its sender is so bound to; a claim on an x402 batch-settlement channel
//! is its channel's payer paying the channel's receiver, the channel being the latest of its id
//! opened before the claim. The store reads the bindings and channels, asks these and stores only
//! what is credited, so what is stored never depends on how ranges were cut. Which of an agent
//! contract's own receipts are payments at all is decided here too (native coin only); which
//! metadata sets an ERC-8004 agent's payment address is `agents::metadata_payment_address`.
//!
//! Positions (block, log index) and addresses are whatever the caller compares them as: the
//! store passes its stored integers and hex text, where an empty address is an unbinding.

use alloy::primitives::Address;
use std::collections::BTreeMap;

/// Whether an agent contract's own `PaymentReceived` event is a payment to store: only in
/// native coin, which leaves no other trace; a token payment is counted from the token's own
/// `Transfer`.
pub fn counts_payment_received(token: &Address) -> bool {
    token.is_zero()
}

/// Whether an agent whose payment addresses are `history` (in chain order, each with the
/// position it took effect at) receives at `address` at position `at`: its latest binding at or
/// before `at` names `address`.
pub fn bound_at<P, A, B>(history: &[(P, A)], address: &B, at: &P) -> bool
where
    P: Ord,
    A: PartialEq<B>,
    B: ?Sized,
{
    let known = history.partition_point(|(position, _)| position <= at);
    known > 0 && history[known - 1].1 == *address
}

/// The agents of `histories` (each agent's payment addresses as [`bound_at`] reads them) that
/// receive at `address` at position `at`, in the map's order.
pub fn bound_agents<'h, K, P, A, B>(
    histories: &'h BTreeMap<K, Vec<(P, A)>>,
    address: &B,
    at: &P,
) -> Vec<&'h K>
where
    P: Ord,
    A: PartialEq<B>,
    B: ?Sized,
{
    histories
        .iter()
        .filter(|(_, history)| bound_at(history, address, at))
        .map(|(agent, _)| agent)
        .collect()
}

/// Who a token transfer is credited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferCredit<'h, K> {
    /// Agents the recipient is bound to: the transfer is a payment to each.
    pub payees: Vec<&'h K>,
    /// Agents the sender is bound to: the transfer is an outflow of each.
    pub senders: Vec<&'h K>,
}

impl<K> TransferCredit<'_, K> {
    /// Whether the transfer concerns no agent, and so is not stored.
    pub fn is_empty(&self) -> bool {
        self.payees.is_empty() && self.senders.is_empty()
    }
}

/// Who a transfer from `from` to `to` at position `at` is credited to, given every concerned
/// agent's payment addresses (`histories`, as [`bound_at`] reads them).
pub fn credit_transfer<'h, K, P, A, B>(
    histories: &'h BTreeMap<K, Vec<(P, A)>>,
    from: &B,
    to: &B,
    at: &P,
) -> TransferCredit<'h, K>
where
    P: Ord,
    A: PartialEq<B>,
    B: ?Sized,
{
    TransferCredit {
        payees: bound_agents(histories, to, at),
        senders: bound_agents(histories, from, at),
    }
}

/// The channel a claim at position `at` is on, among the channels opened under its id
/// (`openings`, in chain order, each with the position it opened at): the latest opened strictly
/// before the claim, if any.
pub fn channel_at<'c, P: Ord, C>(openings: &'c [(P, C)], at: &P) -> Option<&'c C> {
    openings
        .iter()
        .rev()
        .find(|(opened, _)| opened < at)
        .map(|(_, channel)| channel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent bound to `a` at (10, 0), moved to `b` at (20, 3), unbound at (30, 0).
    fn history() -> Vec<((i64, i64), String)> {
        vec![
            ((10, 0), "a".to_string()),
            ((20, 3), "b".to_string()),
            ((30, 0), String::new()),
        ]
    }

    #[test]
    fn an_address_receives_from_its_binding_until_the_next_one() {
        let history = history();
        assert!(!bound_at(&history, "a", &(9, 9)), "before any binding");
        assert!(
            bound_at(&history, "a", &(10, 0)),
            "at the binding's own log"
        );
        assert!(bound_at(&history, "a", &(20, 2)));
        assert!(!bound_at(&history, "a", &(20, 3)), "rebound at that log");
        assert!(bound_at(&history, "b", &(20, 3)));
        assert!(!bound_at(&history, "b", &(30, 0)), "unbound");
        assert!(!bound_at(&history, "c", &(15, 0)), "never bound");
        let empty: Vec<((i64, i64), String)> = Vec::new();
        assert!(!bound_at(&empty, "a", &(15, 0)));
    }

    #[test]
    fn a_transfer_is_a_payment_of_its_recipients_agents_and_an_outflow_of_its_senders() {
        let histories = BTreeMap::from([
            ("one", history()),
            ("two", vec![((5, 0), "a".to_string())]),
            ("three", vec![((5, 0), "b".to_string())]),
        ]);
        let credit = credit_transfer(&histories, "b", "a", &(12, 0));
        assert_eq!(
            credit.payees,
            [&"one", &"two"],
            "both bound to a, in key order"
        );
        assert_eq!(credit.senders, [&"three"]);
        assert!(!credit.is_empty());
        let later = credit_transfer(&histories, "a", "b", &(25, 0));
        assert_eq!(later.payees, [&"one", &"three"]);
        assert_eq!(later.senders, [&"two"]);
        assert!(credit_transfer(&histories, "x", "y", &(12, 0)).is_empty());
        assert!(bound_agents(&histories, "a", &(1, 0)).is_empty());
    }

    #[test]
    fn a_claim_is_on_the_latest_channel_of_its_id_opened_before_it() {
        let openings = [((10, 1), "first"), ((40, 0), "reopened")];
        assert_eq!(
            channel_at(&openings, &(10, 1)),
            None,
            "not before its opening"
        );
        assert_eq!(channel_at(&openings, &(10, 2)), Some(&"first"));
        assert_eq!(channel_at(&openings, &(40, 0)), Some(&"first"));
        assert_eq!(channel_at(&openings, &(41, 0)), Some(&"reopened"));
        let none: [((i64, i64), &str); 0] = [];
        assert_eq!(channel_at(&none, &(50, 0)), None);
    }

    #[test]
    fn only_native_coin_received_by_a_contract_is_counted_from_its_own_event() {
        assert!(counts_payment_received(&Address::ZERO));
        assert!(!counts_payment_received(&Address::from([1; 20])));
    }
}
