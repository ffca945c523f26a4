//! The MCP server's answers to each request: its identity, the tools (`super::tools`) and the
//! resources (`super::resources`). One [`Directory`] serves every transport; clones share the
//! schema, the store and the catalogue read from the schema once.

use super::answers;
use super::arguments;
use super::catalogue::Catalogue;
use super::documents;
use super::echo::quoted;
use super::query;
use super::render;
use super::resources;
use super::tools::Tool;
use crate::graphql::AgentSchema;
use crate::state::ApiState;
use agentindex_indexer::store::low_priority;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::OnceCell;

/// What a model is told of the server when it connects.
const INSTRUCTIONS: &str = "agentindex indexes AI agents registered on-chain (ERC-8004 \
    identity, reputation and validation registries, agent factories and registries) with their \
    A2A Agent Cards, registration files, x402 payments and feedback. Call search_agents to find \
    agents by skill, text, payment or reputation; get_agent for one agent; get_reputation to \
    explain a score; list_payments and list_feedback for the evidence; network_status for what \
    this index covers and how current it is.";

/// The longest tool error, in characters.
const MOST_ERROR_CHARS: usize = 600;

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
        // Errors can quote what the call sent (a cursor, a value): cut to a readable length.
        let refused = |message: String| {
            let message = match message.char_indices().nth(MOST_ERROR_CHARS) {
                Some((end, _)) => format!("{}…", &message[..end]),
                None => message,
            };
            CallToolResult::error(vec![ContentBlock::text(message)])
        };
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

/// `work` as `context`'s request should run it: in the store's low-priority scope when the
/// rate limit sent the request to the low-priority lane (the SDK runs handlers in a task of
/// its own, which the scope does not follow), and abandoned when the request is cancelled
/// (the client hung up or sent `notifications/cancelled`).
async fn guarded<T>(
    context: &RequestContext<RoleServer>,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let lowered = context
        .extensions
        .get::<axum::http::request::Parts>()
        .is_some_and(|parts| {
            parts
                .extensions
                .get::<crate::low_priority_lane::LoweredRequest>()
                .is_some()
        });
    let work = async {
        if lowered {
            low_priority::scope(work).await
        } else {
            work.await
        }
    };
    context
        .ct
        .run_until_cancelled(work)
        .await
        .unwrap_or_else(|| Err(ErrorData::internal_error("the request was cancelled", None)))
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        guarded(&context, async {
            Ok(ListToolsResult::with_all_items(
                self.catalogue().await?.tools.clone(),
            ))
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = Tool::named(&request.name) else {
            let known: Vec<&str> = Tool::ALL.iter().map(|tool| tool.name()).collect();
            // Unknown tools are a protocol error, as the MCP specification has it.
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool is called {}; the tools are {}",
                    quoted(&request.name),
                    known.join(", ")
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        guarded(&context, async {
            Ok(self.call(tool, &arguments).await?.into())
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        guarded(
            &context,
            resources::list(&self.shared.schema, &self.shared.state, cursor),
        )
        .await
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
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = resources::read(&self.shared.schema, &self.shared.state, &request.uri);
        Ok(guarded(&context, read).await?.into())
    }
}
