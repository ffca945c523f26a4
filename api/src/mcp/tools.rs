//! The tools the MCP server offers: each one's name, the words a model reads to choose it, its
//! arguments, and the GraphQL document that answers it (`super::documents`).

use super::documents;
use serde_json::{Value, json};

/// One tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// Agents by filter, full-text search and order, a page at a time.
    SearchAgents,
    /// One agent whole.
    GetAgent,
    /// One agent's reputation and why.
    GetReputation,
    /// Payments credited to an agent.
    ListPayments,
    /// ERC-8004 feedback given to an agent.
    ListFeedback,
    /// The indexed chains and their totals.
    NetworkStatus,
}

/// Agents a `search_agents` page shows unless asked otherwise.
pub(crate) const DEFAULT_AGENTS: i64 = 10;
/// Payments or feedback a page shows unless asked otherwise.
pub(crate) const DEFAULT_ENTRIES: i64 = 20;
/// The most a page shows, as on `/graphql`.
pub(crate) const MAX_PAGE: i64 = crate::graphql::query::MAX_PAGE as i64;

impl Tool {
    /// Every tool, in the order `tools/list` gives them.
    pub(crate) const ALL: [Tool; 6] = [
        Tool::SearchAgents,
        Tool::GetAgent,
        Tool::GetReputation,
        Tool::ListPayments,
        Tool::ListFeedback,
        Tool::NetworkStatus,
    ];

    /// The tool called `name`.
    pub(crate) fn named(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// Its name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::SearchAgents => "search_agents",
            Tool::GetAgent => "get_agent",
            Tool::GetReputation => "get_reputation",
            Tool::ListPayments => "list_payments",
            Tool::ListFeedback => "list_feedback",
            Tool::NetworkStatus => "network_status",
        }
    }

    /// A title for people.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Tool::SearchAgents => "Search AI agents",
            Tool::GetAgent => "Get one agent",
            Tool::GetReputation => "Explain an agent's reputation",
            Tool::ListPayments => "List an agent's payments",
            Tool::ListFeedback => "List an agent's feedback",
            Tool::NetworkStatus => "Indexer and network status",
        }
    }

    /// What it does, for a model deciding whether to call it.
    pub(crate) fn description(self) -> &'static str {
        match self {
            Tool::SearchAgents => {
                "Find AI agents registered on-chain (ERC-8004 identity registries, agent \
                 factories and registries) by what they can do and how they are paid. Combine \
                 free text (`search`: words of the name, description, skills or tags) with \
                 filters such as `skill`, `tags`, `x402` (accepts x402 micropayments), \
                 `minReputation` (0-100), `reachable` (its endpoints answered when last \
                 probed) or `chainIds`. Returns a page of agents with their skills, reputation \
                 score and reachability, the total count, and `endCursor`: pass it as `after` \
                 for the next page. Use `get_agent` on an id for everything about one agent."
            }
            Tool::GetAgent => {
                "Everything indexed about one agent, by the `id` that `search_agents` returns \
                 (`{chain}:{registry}:{token id}` or `{chain}:{agent contract}`): its A2A \
                 Agent Card and registration file (status, signature, where they are), skills, \
                 input and output modes, owner and wallets, declared payment terms, whether its \
                 endpoints answer, and a reputation summary."
            }
            Tool::GetReputation => {
                "Why an agent has the reputation score it has (0-100): each component (payments, \
                 trust rank of its payers, feedback weighed by evidence, validations, ratings, \
                 availability) with its weight and the inputs behind it, the payers that added \
                 most, and how feedback was weighed. Payments count only from distinct payers \
                 that are not the agent, its owner or its operators."
            }
            Tool::ListPayments => {
                "Payments credited to an agent, newest first, each with the payer, token, amount \
                 (in the token's smallest unit), whether it settled an x402 authorisation and \
                 whether it counts for reputation (and if not, why). Paged: pass `endCursor` as \
                 `after`."
            }
            Tool::ListFeedback => {
                "ERC-8004 feedback given to an agent, newest first: who gave it, the value and \
                 its decimals, tags, the endpoint it is about, whether it was revoked, and the \
                 responses appended to it. Paged: pass `endCursor` as `after`."
            }
            Tool::NetworkStatus => {
                "Which chains this index follows, how far it has indexed each (head, finalized \
                 and indexed block, lag), and how many agents, payments, feedback and \
                 validation requests it holds per chain."
            }
        }
    }

    /// The GraphQL document that answers it.
    pub(crate) fn document(self) -> &'static str {
        match self {
            Tool::SearchAgents => documents::SEARCH_AGENTS,
            Tool::GetAgent => documents::GET_AGENT,
            Tool::GetReputation => documents::GET_REPUTATION,
            Tool::ListPayments => documents::LIST_PAYMENTS,
            Tool::ListFeedback => documents::LIST_FEEDBACK,
            Tool::NetworkStatus => documents::NETWORK_STATUS,
        }
    }

    /// Its own arguments' JSON Schemas (`search_agents` takes the filter's fields beside them,
    /// `super::catalogue`), and which are required.
    pub(crate) fn arguments(self) -> (Value, &'static [&'static str]) {
        let id = json!({
            "type": "string",
            "description": "The agent's id, as search_agents returns it: \
                            `{chain}:{registry}:{token id}` or `{chain}:{agent contract}`."
        });
        let after = json!({
            "type": "string",
            "description": "The `endCursor` of the previous page, to continue after it."
        });
        let page = |default: i64, what: &str| {
            json!({
                "type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": default,
                "description": format!("How many {what} to return (at most {MAX_PAGE}).")
            })
        };
        match self {
            Tool::SearchAgents => (
                json!({
                    "search": {
                        "type": "string",
                        "description": "Words every matching agent's name, description, skills \
                                        or tags contain (the last may be the start of a word)."
                    },
                    "first": page(DEFAULT_AGENTS, "agents"),
                    "after": after,
                }),
                &[],
            ),
            Tool::GetAgent | Tool::GetReputation => (json!({ "id": id }), &["id"]),
            Tool::ListPayments => (
                json!({ "id": id, "first": page(DEFAULT_ENTRIES, "payments"), "after": after }),
                &["id"],
            ),
            Tool::ListFeedback => (
                json!({ "id": id, "first": page(DEFAULT_ENTRIES, "feedback"), "after": after }),
                &["id"],
            ),
            Tool::NetworkStatus => (json!({}), &[]),
        }
    }
}
