//! An ERC-8004 agent from its Identity Registry facts: owner, URI, agentWallet and the token's
//! approved operator, each the latest in chain order.

use super::{AgentState, Position, wallet_from_metadata};
use crate::sources::hex_address;

/// What the facts of one token say, folded in chain order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenFacts {
    /// The first registration.
    pub registered: Option<Registration>,
    /// New owner and position of the latest transfer.
    pub transferred: Option<(String, Position)>,
    /// URI and position of the latest URI update.
    pub uri_updated: Option<(String, Position)>,
    /// Raw value and block of the latest agentWallet metadata.
    pub wallet: Option<(Vec<u8>, i64)>,
    /// Operator, whether approved, and position of the latest token approval.
    pub approval: Option<(String, bool, Position)>,
}

/// A token's registration (its Identity Registry `Registered` event).
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    /// The account the token was minted to.
    pub owner: String,
    /// The registration file's URI as registered.
    pub uri: String,
    /// Where on the chain it was registered.
    pub at: Position,
    /// The registration block's time, in seconds since the Unix epoch.
    pub timestamp: i64,
}

/// The state of token `id` of `registry` (lower-case hex) under `key`; `None` when it was
/// never registered (a reorg undid its registration).
pub fn erc8004_agent(
    key: String,
    registry: &str,
    id: &str,
    facts: &TokenFacts,
) -> Option<AgentState> {
    let Registration {
        owner: first_owner,
        uri: first_uri,
        at: registered,
        timestamp: registered_at,
    } = facts.registered.clone()?;
    let mut owner = first_owner;
    let mut uri = first_uri;
    let mut updated_block = registered.0;
    let mut transferred: Position = (0, 0);
    if let Some((to, at)) = &facts.transferred {
        owner = to.clone();
        transferred = *at;
        updated_block = updated_block.max(at.0);
    }
    if let Some((new_uri, at)) = &facts.uri_updated
        && *at > registered
    {
        uri = new_uri.clone();
        updated_block = updated_block.max(at.0);
    }
    let mut wallet = None;
    if let Some((value, block)) = &facts.wallet {
        wallet = wallet_from_metadata(value).map(|w| hex_address(&w));
        updated_block = updated_block.max(*block);
    }
    // The token's approved address holds until any later transfer clears it.
    let mut operators = Vec::new();
    if let Some((operator, true, at)) = &facts.approval
        && *at > transferred
    {
        operators.push(operator.clone());
    }
    Some(AgentState {
        key,
        source: "erc8004".into(),
        registry: Some(registry.to_string()),
        token_id: Some(id.to_string()),
        owner,
        operators,
        uri: Some(uri),
        payment_address: wallet.clone(),
        agent_wallet: wallet,
        active: true,
        registered_block: registered.0,
        registered_at,
        last_event_block: updated_block,
        ..AgentState::default()
    })
}

/// Adds the operators the agent's owner approves for all its tokens, keeping them sorted and
/// distinct.
pub fn add_operators_for_all(agent: &mut AgentState, approved: &[String]) {
    agent.operators.extend(approved.iter().cloned());
    agent.operators.sort();
    agent.operators.dedup();
}

/// The operators each owner approves for all its tokens, from `(owner, operator, approved)`
/// approvals in chain order: the latest word on each pair holds.
pub fn operators_for_all(
    approvals: impl IntoIterator<Item = (String, String, bool)>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut latest = std::collections::BTreeMap::new();
    for (owner, operator, on) in approvals {
        latest.insert((owner, operator), on);
    }
    let mut approved: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for ((owner, operator), on) in latest {
        if on {
            approved.entry(owner).or_default().push(operator);
        }
    }
    approved
}
