//! The JSON Schema of a tool's arguments, read from the GraphQL schema itself: every field of
//! an input type (`AgentFilter`) becomes a property with its GraphQL description, and every
//! enum its list of values, so a filter added to the GraphQL API reaches MCP clients unedited.

use super::query::{self, QueryRefused};
use crate::graphql::AgentSchema;
use crate::state::ApiState;
use serde_json::{Map, Value, json};

/// The introspection of one input type's fields, four wrappers deep (`[Int!]!` is three).
const INPUT_FIELDS: &str = "query($name: String!) { __type(name: $name) { inputFields {
    name description type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }
} } }";

/// The introspection of one enum's values.
const ENUM_VALUES: &str =
    "query($name: String!) { __type(name: $name) { enumValues { name description } } }";

/// The properties of the input type `name`: one JSON Schema per field, by field name.
pub(crate) async fn properties_of(
    schema: &AgentSchema,
    state: &ApiState,
    name: &str,
) -> Result<Map<String, Value>, QueryRefused> {
    let data = query::run(
        schema,
        state,
        "introspection",
        INPUT_FIELDS,
        json!({ "name": name }),
    )
    .await?;
    let fields = data["__type"]["inputFields"]
        .as_array()
        .ok_or_else(|| QueryRefused(vec![format!("the schema has no input type {name}")]))?;
    let mut properties = Map::new();
    for field in fields {
        let Some(field_name) = field["name"].as_str() else {
            continue;
        };
        let mut property = type_schema(schema, state, &field["type"]).await?;
        if let (Some(description), Some(object)) =
            (field["description"].as_str(), property.as_object_mut())
        {
            object.insert("description".into(), description.into());
        }
        properties.insert(field_name.to_owned(), property);
    }
    Ok(properties)
}

/// The values of the enum `name`, each with its description, as a JSON Schema.
pub(crate) async fn enum_schema(
    schema: &AgentSchema,
    state: &ApiState,
    name: &str,
) -> Result<Value, QueryRefused> {
    let data = query::run(
        schema,
        state,
        "introspection",
        ENUM_VALUES,
        json!({ "name": name }),
    )
    .await?;
    let values = data["__type"]["enumValues"]
        .as_array()
        .ok_or_else(|| QueryRefused(vec![format!("the schema has no enum {name}")]))?;
    let names: Vec<&str> = values.iter().filter_map(|v| v["name"].as_str()).collect();
    let meanings: Vec<String> = values
        .iter()
        .filter_map(|v| {
            let name = v["name"].as_str()?;
            Some(match v["description"].as_str() {
                Some(description) => format!("{name}: {description}"),
                None => name.to_owned(),
            })
        })
        .collect();
    Ok(json!({ "type": "string", "enum": names, "description": meanings.join(" ") }))
}

/// The JSON Schema of one introspected GraphQL type (`kind`, `name`, `ofType`).
async fn type_schema(
    schema: &AgentSchema,
    state: &ApiState,
    graphql_type: &Value,
) -> Result<Value, QueryRefused> {
    // Wrappers first, innermost last: NON_NULL says nothing a property's absence doesn't.
    let mut lists = 0;
    let mut current = graphql_type;
    while let Some(kind) = current["kind"].as_str() {
        match kind {
            "NON_NULL" => current = &current["ofType"],
            "LIST" => {
                lists += 1;
                current = &current["ofType"];
            }
            _ => break,
        }
    }
    let name = current["name"].as_str().unwrap_or_default();
    let mut inner = match (current["kind"].as_str(), name) {
        (Some("ENUM"), _) => enum_schema(schema, state, name).await?,
        (_, "Int") => json!({ "type": "integer" }),
        (_, "Float") => json!({ "type": "number" }),
        (_, "Boolean") => json!({ "type": "boolean" }),
        (_, "String" | "ID") => json!({ "type": "string" }),
        _ => json!({}),
    };
    for _ in 0..lists {
        inner = json!({ "type": "array", "items": inner });
    }
    Ok(inner)
}
