//! A tool's answer as structured content: the GraphQL `data` of its document with connection
//! wrappers flattened (`edges { node }` becomes a list), and an unknown agent made an error a
//! model can read.

use super::echo::quoted;
use super::tools::Tool;
use serde_json::{Value, json};

/// Why a tool found nothing to answer with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoAnswer {
    /// No agent has the id.
    #[error("no agent has the id {0}; search_agents returns the ids this index knows")]
    UnknownAgent(String),
}

/// The structured content of `tool`'s answer `data`, asked about `variables`.
pub(crate) fn shape(tool: Tool, variables: &Value, data: Value) -> Result<Value, NoAnswer> {
    let unknown = || NoAnswer::UnknownAgent(quoted(variables["id"].as_str().unwrap_or_default()));
    Ok(match tool {
        Tool::SearchAgents => {
            let connection = &data["agents"];
            let agents: Vec<Value> = connection["edges"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|edge| edge["node"].clone())
                .collect();
            json!({
                "totalCount": connection["totalCount"],
                "hasNextPage": connection["pageInfo"]["hasNextPage"],
                "endCursor": connection["pageInfo"]["endCursor"],
                "agents": agents,
            })
        }
        Tool::GetAgent | Tool::GetReputation => match data.get("agent") {
            Some(agent) if agent.is_object() => agent.clone(),
            _ => return Err(unknown()),
        },
        Tool::ListPayments | Tool::ListFeedback => {
            let agent = match data.get("agent") {
                Some(agent) if agent.is_object() => agent,
                _ => return Err(unknown()),
            };
            let list = if tool == Tool::ListPayments {
                "payments"
            } else {
                "feedback"
            };
            let connection = &agent[list];
            json!({
                "id": agent["id"],
                "name": agent["name"],
                "totalCount": connection["totalCount"],
                "hasNextPage": connection["pageInfo"]["hasNextPage"],
                "endCursor": connection["pageInfo"]["endCursor"],
                list: connection["nodes"],
            })
        }
        Tool::NetworkStatus => data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_flatten_and_unknown_agents_are_named() {
        let data = json!({ "agents": {
            "totalCount": 3,
            "pageInfo": { "hasNextPage": true, "endCursor": "c2" },
            "edges": [{ "node": { "id": "a" } }, { "node": { "id": "b" } }],
        }});
        assert_eq!(
            shape(Tool::SearchAgents, &json!({}), data).unwrap(),
            json!({ "totalCount": 3, "hasNextPage": true, "endCursor": "c2",
                    "agents": [{ "id": "a" }, { "id": "b" }] })
        );
        let missing = shape(
            Tool::ListFeedback,
            &json!({ "id": "1:0xdead" }),
            json!({ "agent": null }),
        );
        assert_eq!(missing, Err(NoAnswer::UnknownAgent("\"1:0xdead\"".into())));
        let flood = "9".repeat(10_000);
        let refused = shape(
            Tool::GetAgent,
            &json!({ "id": flood }),
            json!({ "agent": null }),
        );
        assert!(
            refused.unwrap_err().to_string().len() < 300,
            "an echo is cut short"
        );
    }
}
