//! ERC-8004 `getSummary`, reproduced off-chain from indexed feedback: for the given clients (each
//! as often as listed) and optional tags, the count of unrevoked feedback and its average, with
//! every value scaled to 18 decimals, the average truncated towards zero, and returned in the
//! most common decimals among the feedback counted (ties to the fewest), truncated again.

use alloy::primitives::{Address, B256, I256};

/// The most decimals a feedback value may have.
pub const MAX_DECIMALS: u8 = 18;

/// One feedback as indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackEntry {
    /// Who gave it.
    pub client: Address,
    /// Its value.
    pub value: i128,
    /// Decimals of `value` (at most 18).
    pub decimals: u8,
    /// First tag.
    pub tag1: String,
    /// Second tag.
    pub tag2: String,
    /// Whether the client revoked it.
    pub revoked: bool,
    /// Where it was given: (block, log index).
    pub position: (u64, u64),
    /// That block's timestamp.
    pub timestamp: u64,
    /// The payment its feedback file cites, when the file was read, is the one the chain
    /// committed to, and fits this feedback (see [`CitedPayment`]).
    pub proof: Option<CitedPayment>,
}

/// The payment a feedback file's `proofOfPayment` cites: a transaction, and who paid whom in it
/// when the file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedPayment {
    /// The paying transaction.
    pub tx_hash: B256,
    /// The payer, when given.
    pub from: Option<Address>,
    /// The address paid, when given.
    pub to: Option<Address>,
}

/// What `getSummary` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Feedback counted.
    pub count: u64,
    /// Their average, in `decimals`.
    pub value: i128,
    /// Decimals of `value`.
    pub decimals: u8,
}

/// `getSummary(agent, clients, tag1, tag2)` over `feedback` (all of one agent); `None` where the
/// contract reverts because no client is given. An empty tag matches any.
pub fn get_summary(
    feedback: &[FeedbackEntry],
    clients: &[Address],
    tag1: &str,
    tag2: &str,
) -> Option<Summary> {
    if clients.is_empty() {
        return None;
    }
    let mut sum = I256::ZERO;
    let mut count = 0u64;
    let mut seen = [0u64; MAX_DECIMALS as usize + 1];
    for client in clients {
        for entry in feedback.iter().filter(|f| f.client == *client) {
            if entry.revoked
                || entry.decimals > MAX_DECIMALS
                || (!tag1.is_empty() && entry.tag1 != tag1)
                || (!tag2.is_empty() && entry.tag2 != tag2)
            {
                continue;
            }
            sum += I256::try_from(entry.value).expect("i128 fits")
                * scale(MAX_DECIMALS - entry.decimals);
            seen[usize::from(entry.decimals)] += 1;
            count += 1;
        }
    }
    if count == 0 {
        return Some(Summary {
            count: 0,
            value: 0,
            decimals: 0,
        });
    }
    let mut decimals = 0u8;
    for d in 1..=MAX_DECIMALS {
        if seen[usize::from(d)] > seen[usize::from(decimals)] {
            decimals = d;
        }
    }
    // I256 division truncates towards zero, as Solidity's does.
    let average = sum / I256::try_from(count).expect("u64 fits");
    let value = average / scale(MAX_DECIMALS - decimals);
    Some(Summary {
        count,
        value: i128::try_from(value).unwrap_or(if value.is_negative() {
            i128::MIN
        } else {
            i128::MAX
        }),
        decimals,
    })
}

fn scale(decimals: u8) -> I256 {
    I256::try_from(10u64)
        .expect("fits")
        .pow(alloy::primitives::U256::from(decimals))
}
