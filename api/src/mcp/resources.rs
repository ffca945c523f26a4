//! The MCP server's resources: each agent's Agent Card and registration file as fetched, under
//! `agentindex://agents/{id}/card` and `…/registration`, and the taxonomy of skills and tags
//! agents carry (`agentindex://taxonomy/skills`, `…/tags`).

use super::documents;
use super::echo::quoted;
use super::query::{self, QueryRefused};
use crate::graphql::AgentSchema;
use crate::read::document_body;
use crate::state::ApiState;
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

/// Where every resource URI begins.
const SCHEME: &str = "agentindex://";
/// Agents each page of `resources/list` covers.
const AGENTS_PER_PAGE: i64 = 50;
/// Skills and tags the taxonomy lists, most carried first (the facets' most).
const TAXONOMY_ENTRIES: i64 = crate::graphql::days::MAX_ENTRIES as i64;

/// A resource, as its URI names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Named {
    /// An agent's document of a kind: `card` or `registration`.
    Document {
        /// The agent's id.
        agent: String,
        /// `card` or `registration`.
        kind: &'static str,
    },
    /// The skills agents advertise, or the tags on them.
    Taxonomy(&'static str),
}

impl Named {
    /// What `uri` names, if it is one of ours.
    pub(crate) fn parse(uri: &str) -> Option<Named> {
        let rest = uri.strip_prefix(SCHEME)?;
        if let Some(facet) = rest.strip_prefix("taxonomy/") {
            return match facet {
                "skills" => Some(Named::Taxonomy("skills")),
                "tags" => Some(Named::Taxonomy("tags")),
                _ => None,
            };
        }
        let rest = rest.strip_prefix("agents/")?;
        let (agent, kind) = rest.rsplit_once('/')?;
        let kind = match kind {
            "card" => "card",
            "registration" => "registration",
            _ => return None,
        };
        // Clients fill `{id}` in percent-encoded (`31337%3A0x…`), as RFC 6570 has it.
        let agent = percent_encoding::percent_decode_str(agent)
            .decode_utf8()
            .ok()?
            .into_owned();
        (!agent.is_empty() && !agent.contains('/')).then_some(Named::Document { agent, kind })
    }

    /// Its URI.
    pub(crate) fn uri(&self) -> String {
        match self {
            Named::Document { agent, kind } => format!("{SCHEME}agents/{agent}/{kind}"),
            Named::Taxonomy(facet) => format!("{SCHEME}taxonomy/{facet}"),
        }
    }
}

/// The URI templates of the agents' documents.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{SCHEME}agents/{{id}}/card"), "agent-card")
            .with_title("An agent's A2A Agent Card")
            .with_description(
                "The Agent Card the agent points at, as fetched (the newest copy read without \
                 fault); `id` is an agent id as search_agents returns it.",
            )
            .with_mime_type("application/json"),
        ResourceTemplate::new(
            format!("{SCHEME}agents/{{id}}/registration"),
            "agent-registration",
        )
        .with_title("An agent's registration file")
        .with_description(
            "The ERC-8004 registration file (agent URI) the agent points at, as fetched.",
        )
        .with_mime_type("application/json"),
    ])
}

/// A page of resources: the taxonomy first, then the documents of [`AGENTS_PER_PAGE`] agents,
/// newest first, after `cursor`.
pub(crate) async fn list(
    schema: &AgentSchema,
    state: &ApiState,
    cursor: Option<String>,
) -> Result<ListResourcesResult, ErrorData> {
    let mut resources = Vec::new();
    if cursor.is_none() {
        resources.push(
            Resource::new(Named::Taxonomy("skills").uri(), "skills")
                .with_title("Skills agents advertise")
                .with_description("Skill ids and how many agents advertise each, most first.")
                .with_mime_type("application/json"),
        );
        resources.push(
            Resource::new(Named::Taxonomy("tags").uri(), "tags")
                .with_title("Tags on agents' skills")
                .with_description("Skill tags and how many agents carry each, most first.")
                .with_mime_type("application/json"),
        );
    }
    let variables = json!({ "first": AGENTS_PER_PAGE, "after": cursor });
    let data = query::run(
        schema,
        state,
        "resources_list",
        documents::RESOURCE_PAGE,
        variables,
    )
    .await
    .map_err(|refused| ErrorData::invalid_params(refused.to_string(), None))?;
    let connection = &data["agents"];
    for edge in connection["edges"].as_array().into_iter().flatten() {
        let agent = &edge["node"];
        let id = agent["id"].as_str().unwrap_or_default();
        let name = agent["name"].as_str().unwrap_or(id);
        for kind in ["card", "registration"] {
            let held = agent["documents"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|d| d["kind"].as_str() == Some(kind) && d["status"].as_str() == Some("ok"));
            if held {
                let named = Named::Document {
                    agent: id.to_owned(),
                    kind,
                };
                resources.push(
                    Resource::new(named.uri(), format!("{id} {kind}"))
                        .with_title(format!("{name}: {kind}"))
                        .with_mime_type("application/json"),
                );
            }
        }
    }
    let mut page = ListResourcesResult::with_all_items(resources);
    if connection["pageInfo"]["hasNextPage"].as_bool() == Some(true) {
        page.next_cursor = connection["pageInfo"]["endCursor"].as_str().map(Into::into);
    }
    Ok(page)
}

/// The resource at `uri`.
pub(crate) async fn read(
    schema: &AgentSchema,
    state: &ApiState,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let not_ours = || {
        ErrorData::resource_not_found(
            format!(
                "{} names no resource: try {SCHEME}agents/{{id}}/card, \
                 {SCHEME}agents/{{id}}/registration, {SCHEME}taxonomy/skills or \
                 {SCHEME}taxonomy/tags",
                quoted(uri)
            ),
            None,
        )
    };
    let text = match Named::parse(uri).ok_or_else(not_ours)? {
        Named::Taxonomy(facet) => taxonomy(schema, state, facet)
            .await
            .map_err(|refused| ErrorData::internal_error(refused.to_string(), None))?,
        Named::Document { agent, kind } => {
            let body = document_body::of_agent(state.store.reader(), &agent, kind)
                .await
                .map_err(|e| {
                    let hidden = crate::client_error::hide("reading a document for MCP", &e);
                    ErrorData::internal_error(hidden.to_string(), None)
                })?
                .ok_or_else(|| {
                    ErrorData::resource_not_found(
                        format!(
                            "no {kind} of an agent with the id {} was read without fault \
                             (get_agent shows its documents, and whether it exists)",
                            quoted(&agent)
                        ),
                        None,
                    )
                })?;
            let Some(bytes) = body.bytes else {
                return Err(ErrorData::invalid_params(
                    format!(
                        "the {kind} at {} is {} bytes, more than the {} a resource serves",
                        quoted(&body.uri),
                        body.size,
                        document_body::MOST_BYTES
                    ),
                    None,
                ));
            };
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("application/json"),
    ]))
}

/// The skills or tags, most carried first, as JSON text.
async fn taxonomy(
    schema: &AgentSchema,
    state: &ApiState,
    facet: &str,
) -> Result<String, QueryRefused> {
    let (document, field) = match facet {
        "skills" => (documents::SKILL_TAXONOMY, "skillFacets"),
        _ => (documents::TAG_TAXONOMY, "tagFacets"),
    };
    let data = query::run(
        schema,
        state,
        "taxonomy",
        document,
        json!({ "first": TAXONOMY_ENTRIES }),
    )
    .await?;
    let list = &data[field];
    let entries: Vec<Value> = list.as_array().cloned().unwrap_or_default();
    Ok(json!({ facet: entries }).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_strangers_are_refused() {
        for named in [
            Named::Document {
                agent: "31337:0xabc:7".into(),
                kind: "card",
            },
            Named::Document {
                agent: "1:0xdef".into(),
                kind: "registration",
            },
            Named::Taxonomy("skills"),
            Named::Taxonomy("tags"),
        ] {
            assert_eq!(Named::parse(&named.uri()), Some(named));
        }
        assert_eq!(
            Named::parse("agentindex://agents/31337%3A0xabc%3A7/card"),
            Some(Named::Document {
                agent: "31337:0xabc:7".into(),
                kind: "card"
            })
        );
        for stranger in [
            "agentindex://agents//card",
            "agentindex://agents/1:0xabc/secrets",
            "agentindex://agents/a/b/card",
            "agentindex://taxonomy/owners",
            "agentindex://agents/1%2F2/card",
            "agentindex://agents/%FF/card",
            "file:///etc/passwd",
        ] {
            assert_eq!(Named::parse(stranger), None, "{stranger}");
        }
    }
}
