//! The tools as `tools/list` describes them: each tool's own arguments, and for
//! `search_agents` every field of the GraphQL `AgentFilter` and the `AgentOrder` values, read
//! from the schema once (`super::input_schema`) and kept.

use super::input_schema;
use super::query::QueryRefused;
use super::tools::Tool;
use crate::graphql::AgentSchema;
use crate::state::ApiState;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The described tools, with the argument names each accepts.
#[derive(Debug)]
pub(crate) struct Catalogue {
    /// As `tools/list` answers.
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// The names of `search_agents`' filter arguments (the fields of `AgentFilter`).
    filter_fields: Vec<String>,
}

impl Catalogue {
    /// Reads the filter's fields from `schema` and describes every tool.
    pub(crate) async fn read(schema: &AgentSchema, state: &ApiState) -> Result<Self, QueryRefused> {
        let filter = input_schema::properties_of(schema, state, "AgentFilter").await?;
        let order = input_schema::enum_schema(schema, state, "AgentOrder").await?;
        let filter_fields = filter.keys().cloned().collect();
        let tools = Tool::ALL
            .into_iter()
            .map(|tool| describe(tool, &filter, &order))
            .collect();
        Ok(Catalogue {
            tools,
            filter_fields,
        })
    }

    /// A catalogue that knows only `filter_fields`, for tests of the arguments.
    #[cfg(test)]
    pub(crate) fn with_filter_fields(filter_fields: Vec<String>) -> Self {
        Catalogue {
            tools: Vec::new(),
            filter_fields,
        }
    }

    /// Whether `name` is a filter argument of `search_agents`.
    pub(crate) fn is_filter_field(&self, name: &str) -> bool {
        self.filter_fields.iter().any(|field| field == name)
    }
}

/// `tool` as `tools/list` gives it.
fn describe(tool: Tool, filter: &Map<String, Value>, order: &Value) -> rmcp::model::Tool {
    let (own, required) = tool.arguments();
    let mut properties = own.as_object().cloned().unwrap_or_default();
    if tool == Tool::SearchAgents {
        for (name, property) in filter {
            properties.insert(name.clone(), property.clone());
        }
        let mut order = order.clone();
        order["description"] = format!(
            "How to order the agents (default: by relevance when searching, else newest \
             first). {}",
            order["description"].as_str().unwrap_or_default()
        )
        .into();
        properties.insert("orderBy".into(), order);
    }
    let input = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    let input = match input {
        Value::Object(input) => input,
        _ => Map::new(),
    };
    let mut described = rmcp::model::Tool::new(tool.name(), tool.description(), Arc::new(input));
    described.title = Some(tool.title().to_owned());
    described.annotations = Some(
        rmcp::model::ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    described
}
