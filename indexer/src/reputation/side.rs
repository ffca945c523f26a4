//! Who stood on an agent's side at each moment: its owner, the operators the owner approved and
//! its wallet, replayed from their on-chain history so a payment is judged by the side as it was
//! when the payment was made, not as it is now.

use super::payments::AgentSide;
use alloy::primitives::Address;
use std::collections::{BTreeMap, BTreeSet};

/// (block, log index) of a fact.
pub type Position = (u64, u64);

/// One change to an agent's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideChange {
    /// The agent changed hands; an ERC-721 transfer also clears the token's approval.
    Owner(Address),
    /// The agent's wallet was set (or cleared).
    Wallet(Option<Address>),
    /// `Approval` of this one agent: the approved address, or none.
    Approved(Option<Address>),
    /// `ApprovalForAll` by `owner`: `operator` may act for every agent `owner` holds.
    OperatorForAll {
        /// The approving owner.
        owner: Address,
        /// The operator.
        operator: Address,
        /// Granted or withdrawn.
        approved: bool,
    },
}

/// An agent's side changes in chain order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SideHistory {
    changes: Vec<(Position, SideChange)>,
}

impl SideHistory {
    /// Adds a change; changes may come in any order.
    pub fn push(&mut self, at: Position, change: SideChange) {
        self.changes.push((at, change));
    }

    /// The side in force just before each of `positions` (which must be in chain order).
    pub fn sides_at(&self, positions: &[Position]) -> Vec<AgentSide> {
        let mut changes = self.changes.clone();
        changes.sort_by_key(|(at, _)| *at);
        let mut replay = Replay::default();
        let mut next = 0;
        positions
            .iter()
            .map(|position| {
                while next < changes.len() && changes[next].0 < *position {
                    replay.apply(changes[next].1);
                    next += 1;
                }
                replay.side()
            })
            .collect()
    }
}

/// The side as changes are applied one by one.
#[derive(Debug, Default)]
struct Replay {
    owner: Option<Address>,
    wallet: Option<Address>,
    approved: Option<Address>,
    for_all: BTreeMap<Address, BTreeSet<Address>>,
}

impl Replay {
    fn apply(&mut self, change: SideChange) {
        match change {
            SideChange::Owner(owner) => {
                self.owner = Some(owner);
                self.approved = None;
            }
            SideChange::Wallet(wallet) => self.wallet = wallet,
            SideChange::Approved(approved) => self.approved = approved,
            SideChange::OperatorForAll {
                owner,
                operator,
                approved,
            } => {
                let operators = self.for_all.entry(owner).or_default();
                if approved {
                    operators.insert(operator);
                } else {
                    operators.remove(&operator);
                }
            }
        }
    }

    fn side(&self) -> AgentSide {
        let mut operators: BTreeSet<Address> = self.approved.into_iter().collect();
        if let Some(owner) = self.owner
            && let Some(for_all) = self.for_all.get(&owner)
        {
            operators.extend(for_all.iter().copied());
        }
        AgentSide {
            owner: self.owner,
            operators: operators.into_iter().collect(),
            wallet: self.wallet,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u8) -> Address {
        Address::repeat_byte(n)
    }

    #[test]
    fn each_position_sees_the_side_of_its_own_time() {
        let mut history = SideHistory::default();
        history.push((5, 0), SideChange::Owner(addr(2)));
        history.push((1, 0), SideChange::Owner(addr(1)));
        history.push((2, 0), SideChange::Approved(Some(addr(9))));
        history.push(
            (3, 0),
            SideChange::OperatorForAll {
                owner: addr(1),
                operator: addr(7),
                approved: true,
            },
        );
        history.push((4, 1), SideChange::Wallet(Some(addr(3))));
        let sides = history.sides_at(&[(1, 0), (2, 1), (4, 1), (4, 2), (6, 0)]);
        assert_eq!(
            sides[0],
            AgentSide::default(),
            "a change applies after itself"
        );
        assert_eq!(sides[1].owner, Some(addr(1)));
        assert_eq!(sides[1].operators, vec![addr(9)]);
        assert_eq!(sides[2].operators, vec![addr(7), addr(9)]);
        assert_eq!(sides[2].wallet, None);
        assert_eq!(sides[3].wallet, Some(addr(3)));
        assert_eq!(
            sides[4],
            AgentSide {
                owner: Some(addr(2)),
                operators: vec![],
                wallet: Some(addr(3)),
            },
            "a transfer clears the approval, and the old owner's operators leave with it"
        );
    }
}
