//! A tool call's arguments turned into its GraphQL document's variables: names checked against
//! what the tool accepts, pages bounded, so a model that misspells an argument hears which one
//! instead of getting an answer that silently ignored it.

use super::catalogue::Catalogue;
use super::tools::{DEFAULT_AGENTS, DEFAULT_ENTRIES, MAX_PAGE, Tool};
use serde_json::{Map, Value, json};

/// Why a call's arguments were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ArgumentError {
    /// An argument the tool does not take.
    #[error("{tool} takes no argument {name}; it takes: {accepted}")]
    Unknown {
        /// The tool.
        tool: &'static str,
        /// The argument given.
        name: String,
        /// What it takes.
        accepted: String,
    },
    /// A required argument is missing or not a string.
    #[error("{tool} needs `{name}` as a string")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// The argument.
        name: &'static str,
    },
    /// A page size out of range.
    #[error("`first` must be an integer from 1 to {MAX_PAGE}, got {given}")]
    Page {
        /// What was given.
        given: Value,
    },
    /// A cursor that is not a string.
    #[error("`after` must be the `endCursor` string of a previous page, got {given}")]
    Cursor {
        /// What was given.
        given: Value,
    },
}

/// The variables of `tool`'s document for `arguments`.
pub(crate) fn variables(
    tool: Tool,
    catalogue: &Catalogue,
    arguments: &Map<String, Value>,
) -> Result<Value, ArgumentError> {
    let (own, _) = tool.arguments();
    let takes = |name: &str| {
        own.get(name).is_some()
            || (tool == Tool::SearchAgents
                && (name == "orderBy" || catalogue.is_filter_field(name)))
    };
    if let Some(name) = arguments.keys().find(|name| !takes(name)) {
        let mut accepted: Vec<String> = own
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect();
        if tool == Tool::SearchAgents {
            accepted.push("orderBy".into());
            accepted.push("the filter fields of its schema".into());
        }
        return Err(ArgumentError::Unknown {
            tool: tool.name(),
            name: super::echo::quoted(name),
            accepted: if accepted.is_empty() {
                "none".into()
            } else {
                accepted.join(", ")
            },
        });
    }
    let after = match arguments.get("after") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(cursor)) => Value::String(cursor.clone()),
        Some(given) => {
            return Err(ArgumentError::Cursor {
                given: given.clone(),
            });
        }
    };
    Ok(match tool {
        Tool::SearchAgents => {
            let filter: Map<String, Value> = arguments
                .iter()
                .filter(|(name, _)| catalogue.is_filter_field(name))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            json!({
                "filter": if filter.is_empty() { Value::Null } else { Value::Object(filter) },
                "search": arguments.get("search").cloned().unwrap_or(Value::Null),
                "orderBy": arguments.get("orderBy").cloned().unwrap_or(Value::Null),
                "first": page(arguments, DEFAULT_AGENTS)?,
                "after": after,
            })
        }
        Tool::GetAgent | Tool::GetReputation => json!({ "id": id(tool, arguments)? }),
        Tool::ListPayments | Tool::ListFeedback => json!({
            "id": id(tool, arguments)?,
            "first": page(arguments, DEFAULT_ENTRIES)?,
            "after": after,
        }),
        Tool::NetworkStatus => json!({}),
    })
}

/// The agent id argument.
fn id(tool: Tool, arguments: &Map<String, Value>) -> Result<String, ArgumentError> {
    match arguments.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
        _ => Err(ArgumentError::Missing {
            tool: tool.name(),
            name: "id",
        }),
    }
}

/// The page size: `default` when absent.
fn page(arguments: &Map<String, Value>, default: i64) -> Result<i64, ArgumentError> {
    match arguments.get("first") {
        None | Some(Value::Null) => Ok(default),
        Some(given) => match given.as_i64() {
            Some(first) if (1..=MAX_PAGE).contains(&first) => Ok(first),
            _ => Err(ArgumentError::Page {
                given: given.clone(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Catalogue {
        Catalogue::with_filter_fields(vec!["skill".into(), "x402".into()])
    }

    fn arguments(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn search_arguments_split_into_filter_and_paging() {
        let variables = variables(
            Tool::SearchAgents,
            &catalogue(),
            &arguments(json!({ "skill": "vision", "x402": true, "search": "image", "first": 5 })),
        )
        .unwrap();
        assert_eq!(
            variables,
            json!({
                "filter": { "skill": "vision", "x402": true },
                "search": "image", "orderBy": null, "first": 5, "after": null
            })
        );
    }

    #[test]
    fn an_unknown_argument_is_named() {
        let refused = variables(
            Tool::SearchAgents,
            &catalogue(),
            &arguments(json!({ "skil": "vision" })),
        )
        .unwrap_err();
        assert!(matches!(&refused, ArgumentError::Unknown { name, .. } if name == "\"skil\""));
        let refused = variables(
            Tool::NetworkStatus,
            &catalogue(),
            &arguments(json!({ "id": "x" })),
        )
        .unwrap_err();
        assert!(refused.to_string().contains("takes: none"), "{refused}");
    }

    #[test]
    fn pages_and_ids_are_checked() {
        for first in [json!(0), json!(101), json!("ten"), json!(2.5)] {
            let refused = variables(
                Tool::ListPayments,
                &catalogue(),
                &arguments(json!({ "id": "1:0xabc", "first": first })),
            )
            .unwrap_err();
            assert!(matches!(refused, ArgumentError::Page { .. }), "{refused}");
        }
        let refused =
            variables(Tool::GetAgent, &catalogue(), &arguments(json!({ "id": 7 }))).unwrap_err();
        assert_eq!(
            refused,
            ArgumentError::Missing {
                tool: "get_agent",
                name: "id"
            }
        );
        let refused = variables(
            Tool::ListFeedback,
            &catalogue(),
            &arguments(json!({ "id": "1:0xabc", "after": 3 })),
        )
        .unwrap_err();
        assert!(matches!(refused, ArgumentError::Cursor { .. }));
        assert_eq!(
            variables(
                Tool::ListFeedback,
                &catalogue(),
                &arguments(json!({ "id": " 1:0xabc " }))
            )
            .unwrap(),
            json!({ "id": "1:0xabc", "first": DEFAULT_ENTRIES, "after": null })
        );
    }
}
