//! The GraphQL each MCP tool and resource asks: one document per question, written against
//! the public schema (`api/schema.graphql`), so what a tool answers is what `/graphql` answers.

/// What a list of agents shows of each.
const AGENT_SUMMARY: &str = "fragment Summary on Agent {
    id chainId source name description owner active x402 registeredAt lastActiveAt
    skills { id name tags }
    card { url status signature }
    reputation { score }
    liveness { status reachable uptime7d }
}";

/// `search_agents`.
pub(crate) const SEARCH_AGENTS: &str = "query McpSearchAgents(
    $filter: AgentFilter, $search: String, $orderBy: AgentOrder, $first: Int, $after: String
) {
    agents(filter: $filter, search: $search, orderBy: $orderBy, first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { ...Summary } }
    }
}";

/// `get_agent`.
pub(crate) const GET_AGENT: &str = "query McpGetAgent($id: ID!) {
    agent(id: $id) {
        id chainId source address tokenId registry owner operators name description active uri
        agentWallet paymentAddress registeredBlock registeredAt lastActivityBlock lastActiveAt
        x402 inputModes outputModes registrationVerified domainVerified paymentTerms
        skills { id name description tags }
        card { url status protocolVersion signature }
        documents { role uri status kind signature error fetchedAt }
        reputation { score paymentCount uniquePayers feedbackCount feedbackAverage validationAverage }
        liveness {
            status reachable lastSeen checkedAt uptime24h uptime7d latencyP50 extendedCard
            endpoints { kind url source status checkedAt lastOkAt latencyMs httpStatus reason error }
            mcpTools { name description }
            x402Live { live }
        }
    }
}";

/// `get_reputation`.
pub(crate) const GET_REPUTATION: &str = "query McpGetReputation($id: ID!) {
    agent(id: $id) {
        id name
        reputation {
            score paymentScore paymentCount uniquePayers excludedPayments feedbackCount
            feedbackAverage validationAverage ratingAverage asOfBlock
            components { payments trust feedback validations ratings availability }
            weights { payments trust feedback validations ratings availability }
            topPayers { payer payments standing contribution cluster { funder size block } }
            trust { epochBlock relative score }
            feedbackEvidence {
                evidenceWeight paidClients provenClients unpaidClients burstClients unpaidScale
            }
        }
    }
}";

/// `list_payments`.
pub(crate) const LIST_PAYMENTS: &str =
    "query McpListPayments($id: ID!, $first: Int!, $after: String) {
    agent(id: $id) {
        id name
        payments(first: $first, after: $after) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes {
                payer payee token amount x402 blockNumber logIndex timestamp counts excludedBecause
            }
        }
    }
}";

/// `list_feedback`.
pub(crate) const LIST_FEEDBACK: &str =
    "query McpListFeedback($id: ID!, $first: Int!, $after: String) {
    agent(id: $id) {
        id name
        feedback(first: $first, after: $after) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes {
                client index value valueDecimals tag1 tag2 endpoint uri blockNumber logIndex
                txHash timestamp revoked responses
            }
        }
    }
}";

/// `network_status`.
pub(crate) const NETWORK_STATUS: &str = "query McpNetworkStatus {
    indexerStatus { chainId name headBlock finalizedBlock indexedBlock lag }
    totals {
        chainId agents factoryAgents registryAgents erc8004Agents payments feedback
        validationRequests
    }
}";

/// The skills taxonomy resource: the skills agents advertise, most advertised first.
pub(crate) const SKILL_TAXONOMY: &str =
    "query McpSkills($first: Int!) { skillFacets(first: $first) { value count } }";

/// The tags taxonomy resource: the tags on agents' skills, most carried first.
pub(crate) const TAG_TAXONOMY: &str =
    "query McpTags($first: Int!) { tagFacets(first: $first) { value count } }";

/// A page of agents for `resources/list`: which documents each has.
pub(crate) const RESOURCE_PAGE: &str = "query McpResourcePage($first: Int!, $after: String) {
    agents(orderBy: NEWEST, first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        edges { node { id name documents { kind status } } }
    }
}";

/// `document` with the agent summary fragment it spreads, when it spreads it.
pub(crate) fn with_fragments(document: &str) -> String {
    if document.contains("...Summary") {
        format!("{document}\n{AGENT_SUMMARY}")
    } else {
        document.to_owned()
    }
}
