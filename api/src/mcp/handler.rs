//! The MCP server's answers to each request: its identity, the tools (`super::tools`) and the
//! resources (`super::resources`). One [`Directory`] serves every transport; clones share the
//! schema, the store and the catalogue read from the schema once.

use super::answers;
use super::arguments;
use super::catalogue::Catalogue;
use super::documents;
use super::query;
use super::render;
use super::resources;
use super::tools::Tool;
use crate::graphql::AgentSchema;
use crate::state::ApiState;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;
use tokio::sync::OnceCell;

/// What a model is told of the server when it connects.
const INSTRUCTIONS: &str = "agentindex indexes AI agents registered on-chain (ERC-8004 \
    identity, reputation and validation registries, agent factories and registries) with their \
    A2A Agent Cards, registration files, x402 payments and feedback. Call search_agents to find \
    agents by skill, text, payment or reputation; get_agent for one agent; get_reputation to \
    explain a score; list_payments and list_feedback for the evidence; network_status for what \
    this index covers and how current it is.";

/// The MCP server over one index.
#[derive(Clone)]
pub struct Directory {
    shared: Arc<Shared>,
}

struct Shared {
    schema: AgentSchema,
    state: ApiState,
    catalogue: OnceCell<Catalogue>,
}

impl Directory {
    /// A server answering from `schema` over `state`.
    pub fn new(schema: AgentSchema, state: ApiState) -> Self {
        Directory {
            shared: Arc::new(Shared {
                schema,
                state,
                catalogue: OnceCell::new(),
            }),
        }
    }

    /// The tools, described once.
    async fn catalogue(&self) -> Result<&Catalogue, ErrorData> {
        let shared = &self.shared;
        shared
            .catalogue
            .get_or_try_init(|| Catalogue::read(&shared.schema, &shared.state))
            .await
            .map_err(|refused| {
                ErrorData::internal_error(format!("describing the tools: {refused}"), None)
            })
    }

    /// Runs `tool` with `arguments`: its answer, or an error result a model can read.
    pub(crate) async fn call(
        &self,
        tool: Tool,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, ErrorData> {
        let catalogue = self.catalogue().await?;
        let refused = |message: String| CallToolResult::error(vec![ContentBlock::text(message)]);
        let variables = match arguments::variables(tool, catalogue, arguments) {
            Ok(variables) => variables,
            Err(e) => return Ok(refused(e.to_string())),
        };
        let document = documents::with_fragments(tool.document());
        let shared = &self.shared;
        let data = match query::run(
            &shared.schema,
            &shared.state,
            tool.name(),
            &document,
            variables.clone(),
        )
        .await
        {
            Ok(data) => data,
            Err(e) => return Ok(refused(format!("{} refused: {e}", tool.name()))),
        };
        match answers::shape(tool, &variables, data) {
            Ok(answer) => {
                let text = render::text(tool, &answer);
                let mut result = CallToolResult::structured(answer);
                result.content = vec![ContentBlock::text(text)];
                Ok(result)
            }
            Err(e) => Ok(refused(e.to_string())),
        }
    }
}

impl ServerHandler for Directory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("agentindex", env!("CARGO_PKG_VERSION"))
                .with_title("agentindex: on-chain AI agents")
                .with_description(
                    "Search AI agents registered on-chain, their cards, payments and reputation.",
                ),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.catalogue().await?.tools.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = Tool::named(&request.name) else {
            let known: Vec<&str> = Tool::ALL.iter().map(|tool| tool.name()).collect();
            // Unknown tools are a protocol error, as the MCP specification has it.
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool is called {:?}; the tools are {}",
                    request.name,
                    known.join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        Ok(self.call(tool, &arguments).await?.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        resources::list(&self.shared.schema, &self.shared.state, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = resources::read(&self.shared.schema, &self.shared.state, &request.uri).await?;
        Ok(read.into())
    }
}
