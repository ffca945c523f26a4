//! A Masumi escrow as its actions leave it, folded in chain order: the lock says who pays whom
//! and how much, each move its state, and a payout how it ended.

/// One stored action of an escrow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscrowFact {
    /// Block height.
    pub block: i64,
    /// Unix time of the block.
    pub timestamp: i64,
    /// The transaction, hex.
    pub tx_hash: String,
    /// 1 or 2.
    pub contract_version: i64,
    /// The agent paid, when known.
    pub agent_key: Option<String>,
    /// The buyer's payment credential.
    pub buyer: String,
    /// The seller's payment credential.
    pub seller: String,
    /// `lovelace` or a token's unit.
    pub unit: String,
    /// The price.
    pub amount: String,
    /// `locked`, `moved`, `released`, `refunded`, `disputed` or `unreadable`.
    pub event: String,
    /// The state after (or left, for a payout).
    pub state: Option<String>,
}

/// What the `masumi_payments` row holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscrowState {
    /// The agent paid, when known.
    pub agent_key: Option<String>,
    /// 1 or 2.
    pub contract_version: i64,
    /// The buyer's payment credential.
    pub buyer: String,
    /// The seller's payment credential.
    pub seller: String,
    /// `lovelace` or a token's unit.
    pub unit: String,
    /// The price.
    pub amount: String,
    /// The state it is in, or left when paid out.
    pub state: Option<String>,
    /// `released`, `refunded` or `disputed`, once paid out.
    pub outcome: Option<String>,
    /// Where it was locked.
    pub locked_block: i64,
    /// When.
    pub locked_at: i64,
    /// The locking transaction.
    pub lock_tx: String,
    /// Where it was paid out.
    pub settled_block: Option<i64>,
    /// When.
    pub settled_at: Option<i64>,
}

/// The escrow `facts` (its own, in chain order) leave; none without a lock (every action
/// undone, an unreadable datum, or an escrow locked before anything was read).
pub fn fold_escrow(facts: &[EscrowFact]) -> Option<EscrowState> {
    let lock = facts.iter().find(|f| f.event == "locked")?;
    let mut state = EscrowState {
        agent_key: lock.agent_key.clone(),
        contract_version: lock.contract_version,
        buyer: lock.buyer.clone(),
        seller: lock.seller.clone(),
        unit: lock.unit.clone(),
        amount: lock.amount.clone(),
        state: lock.state.clone(),
        outcome: None,
        locked_block: lock.block,
        locked_at: lock.timestamp,
        lock_tx: lock.tx_hash.clone(),
        settled_block: None,
        settled_at: None,
    };
    for fact in facts.iter().skip_while(|f| f.event != "locked").skip(1) {
        match fact.event.as_str() {
            "moved" => state.state = fact.state.clone(),
            "released" | "refunded" | "disputed" => {
                state.state = fact.state.clone();
                state.outcome = Some(fact.event.clone());
                state.settled_block = Some(fact.block);
                state.settled_at = Some(fact.timestamp);
            }
            _ => {}
        }
    }
    Some(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(block: i64, event: &str, state: &str) -> EscrowFact {
        EscrowFact {
            block,
            timestamp: block * 20,
            tx_hash: format!("{block:064x}"),
            contract_version: 2,
            agent_key: Some("1073741825:ab".into()),
            buyer: "b0".into(),
            seller: "5e".into(),
            unit: "lovelace".into(),
            amount: "7000000".into(),
            event: event.into(),
            state: Some(state.into()),
        }
    }

    #[test]
    fn a_purchase_from_lock_to_payout() {
        let locked = fold_escrow(&[fact(3, "locked", "FundsLocked")]).unwrap();
        assert_eq!((locked.outcome, locked.settled_block), (None, None));
        assert_eq!((locked.locked_block, locked.locked_at), (3, 60));
        let released = fold_escrow(&[
            fact(3, "locked", "FundsLocked"),
            fact(4, "moved", "ResultSubmitted"),
            fact(6, "released", "ResultSubmitted"),
        ])
        .unwrap();
        assert_eq!(released.outcome.as_deref(), Some("released"));
        assert_eq!(
            (released.settled_block, released.settled_at),
            (Some(6), Some(120))
        );
        assert_eq!(released.lock_tx, format!("{:064x}", 3));
        assert!(
            fold_escrow(&[fact(4, "moved", "ResultSubmitted")]).is_none(),
            "no lock seen"
        );
        assert!(fold_escrow(&[]).is_none());
    }
}
